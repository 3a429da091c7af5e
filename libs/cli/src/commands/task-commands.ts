import type { ArsClient, MethodResponse, TaskListRequest } from '@ars/client';
import { EXIT } from '../io.ts';
import type { Io } from '../io.ts';
import { createStyle, clip, formatDuration } from '../render/style.ts';
import { formatTable } from '../render/table.ts';
import { colorOf, CommandError, connect, parse, positiveInt, UsageError } from './client-support.ts';

/** `ars tasks`, `ars approve`, `ars reject`, `ars cancel`, `ars pause`, `ars resume`, `ars redirect`. */

/** The task status values of the contract. */
export const TASK_STATUSES = ['pending', 'running', 'paused', 'complete', 'failed', 'cancelled'] as const;
type TaskStatus = (typeof TASK_STATUSES)[number];
type TaskItem = MethodResponse<'tasks.list'>['items'][number];

/** How many pages of pause.list `approve` reads looking for a token. */
const PAUSE_PAGES = 10;

const sessionOption = (session: string | undefined) => (session === undefined ? {} : { session });

function parseStatuses(values: readonly string[] | undefined): TaskStatus[] | undefined {
  if (values === undefined) return undefined;
  const statuses = values.flatMap((v) => v.split(',')).map((v) => v.trim());
  for (const status of statuses) {
    if (!(TASK_STATUSES as readonly string[]).includes(status))
      throw new UsageError(`--status must be one of ${TASK_STATUSES.join(', ')}, not "${status}"`);
  }
  return statuses as TaskStatus[];
}

/**
 * `ars tasks [--status s]… [--limit n] [--text q] [--session id] [--json]`:
 * the session's tasks, newest first, as a table with the per-status counts
 * (or tasks.list's answer as JSON).
 */
export async function tasksCommand(io: Io, args: readonly string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    status: { type: 'string', multiple: true },
    limit: { type: 'string' },
    text: { type: 'string' },
    session: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(`tasks takes options only, not "${positionals[0]}"`);
  const status = parseStatuses(values.status);
  const limit = positiveInt(values.limit, '--limit') ?? 20;
  const filter: TaskListRequest['filter'] = {
    ...(status === undefined ? {} : { status }),
    ...(values.text === undefined ? {} : { text: values.text }),
  };
  const client = await connect(io);
  const answer = await client.tasks.list(
    { limit, ...(Object.keys(filter).length === 0 ? {} : { filter }) },
    sessionOption(values.session),
  );
  if (values.json === true) {
    io.stdout(`${JSON.stringify(answer)}\n`);
    return EXIT.ok;
  }
  io.stdout(formatTasks(answer, colorOf(io)));
  return EXIT.ok;
}

/** The table of `ars tasks`: id, status, created (local time), duration, query; then the counts. */
export function formatTasks(answer: MethodResponse<'tasks.list'>, color: boolean): string {
  const style = createStyle(color);
  const counts = Object.entries(answer.counts)
    .filter(([key, value]) => (TASK_STATUSES as readonly string[]).includes(key) && value !== 0)
    .map(([key, value]) => `${String(value)} ${key}`)
    .join(' · ');
  if (answer.items.length === 0) return `no tasks${counts === '' ? '' : ` (${counts})`}\n`;
  const rows = answer.items.map((task) => [
    task.task_id,
    task.status,
    localTime(task.created_at),
    durationOf(task),
    clip(task.query, 60),
  ]);
  const table = formatTable(['TASK', 'STATUS', 'CREATED', 'DURATION', 'QUERY'], rows);
  const more = answer.next_cursor === undefined ? '' : ' (more: raise --limit)';
  return table + style.dim(`${counts}${more}`) + '\n';
}

function localTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function durationOf(task: TaskItem): string {
  if (task.started_at === undefined) return '-';
  if (task.ended_at === undefined) return 'running';
  return formatDuration(Date.parse(task.ended_at) - Date.parse(task.started_at));
}

/** Finds the run a pause token belongs to in pause.list of the caller's session. */
async function runOfPause(client: ArsClient, token: string, session: string | undefined): Promise<string> {
  let cursor: string | undefined;
  for (let page = 0; page < PAUSE_PAGES; page++) {
    const answer = await client.pause.list(
      { limit: 100, ...(cursor === undefined ? {} : { cursor }) },
      sessionOption(session),
    );
    const found = answer.items.find((item) => item.token === token);
    if (found !== undefined) return found.task_id;
    cursor = answer.next_cursor;
    if (cursor === undefined) break;
  }
  throw new CommandError(
    `no pending pause has the token ${token} in this session (pause.list); pass --session, or --run <task-id>`,
  );
}

/**
 * `ars approve|reject <pause-token> [--reason text] [--run task-id]
 * [--session id] [--json]`: answers a pause that awaits approval. The run
 * is found by pause.list unless --run names it.
 */
function decisionCommand(method: 'approve' | 'reject') {
  return async (io: Io, args: readonly string[]): Promise<number> => {
    const { values, positionals } = parse(args, {
      reason: { type: 'string' },
      run: { type: 'string' },
      session: { type: 'string' },
      json: { type: 'boolean' },
    });
    const [token, ...extra] = positionals;
    if (token === undefined || token === '')
      throw new UsageError(
        `${method} needs a pause token (printed by ars run --follow, listed by ars call pause.list)`,
      );
    if (extra.length > 0) throw new UsageError(`${method} takes one pause token`);
    const client = await connect(io);
    const run = values.run ?? (await runOfPause(client, token, values.session));
    const payload = { token, ...(values.reason === undefined ? {} : { reason: values.reason }) };
    const answer = await client[method]({ identity: { run }, payload }, sessionOption(values.session));
    io.stdout(
      values.json === true
        ? `${JSON.stringify(answer)}\n`
        : `${method} of ${token} accepted for run ${run}; the effect shows on its events (ars events --pretty --run ${run})\n`,
    );
    return EXIT.ok;
  };
}

/** `ars approve <pause-token>`: see {@link decisionCommand}. */
export const approveCommand = decisionCommand('approve');
/** `ars reject <pause-token>`: see {@link decisionCommand}. */
export const rejectCommand = decisionCommand('reject');

/** `ars cancel <task-id> [--hard] [--session id] [--json]`: stops a live run. */
export async function cancelCommand(io: Io, args: readonly string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    hard: { type: 'boolean' },
    session: { type: 'string' },
    json: { type: 'boolean' },
  });
  const [run, ...extra] = positionals;
  if (run === undefined || run === '' || extra.length > 0) throw new UsageError('cancel takes one task id');
  const client = await connect(io);
  const answer = await client.cancel(
    { identity: { run }, ...(values.hard === true ? { payload: { hard: true } } : {}) },
    sessionOption(values.session),
  );
  io.stdout(values.json === true ? `${JSON.stringify(answer)}\n` : `cancel accepted for run ${run}\n`);
  return EXIT.ok;
}

/** The steering controls `ars <control> <task-id>` sends, with what each takes besides the task id. */
const STEERING = {
  pause: { usage: 'pause <task-id> [--reason <text>]', goal: false },
  resume: { usage: 'resume <task-id> [--reason <text>]', goal: false },
  redirect: { usage: 'redirect <task-id> "<new goal>"', goal: true },
} as const;

/**
 * `ars pause|resume <task-id> [--reason r]` and `ars redirect <task-id>
 * "<goal>"` (`--session id`, `--json`): sends the control to a live run;
 * its effect shows on the stream (`ars run --follow`, `ars events --pretty`).
 */
function steeringCommand(control: keyof typeof STEERING) {
  const { usage, goal } = STEERING[control];
  return async (io: Io, args: readonly string[]): Promise<number> => {
    const { values, positionals } = parse(args, {
      reason: { type: 'string' },
      session: { type: 'string' },
      json: { type: 'boolean' },
    });
    const [run, ...rest] = positionals;
    const text = rest.join(' ').trim();
    if (run === undefined || run === '' || (goal ? text === '' : rest.length > 0)) throw new UsageError(usage);
    if (goal && values.reason !== undefined) throw new UsageError(`${control} takes no --reason: ${usage}`);
    const payload = goal ? { goal: text } : values.reason === undefined ? undefined : { reason: values.reason };
    const client = await connect(io);
    const answer = await client.call(
      control,
      { identity: { run }, ...(payload === undefined ? {} : { payload }) },
      sessionOption(values.session),
    );
    io.stdout(values.json === true ? `${JSON.stringify(answer)}\n` : `${control} accepted for run ${run}\n`);
    return EXIT.ok;
  };
}

/** `ars pause <task-id>`: parks the run at its next planner-step boundary. */
export const pauseCommand = steeringCommand('pause');
/** `ars resume <task-id>`: resumes a parked run. */
export const resumeCommand = steeringCommand('resume');
/** `ars redirect <task-id> "<goal>"`: rewrites the run's goal. */
export const redirectCommand = steeringCommand('redirect');
