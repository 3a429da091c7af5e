import type { ArsClient, EventFrame, RunOutcome, StartRequest } from '@ars/client';
import { EXIT } from '../io.ts';
import type { Io } from '../io.ts';
import { createRunRenderer } from '../render/run-renderer.ts';
import type { RunRenderer } from '../render/run-renderer.ts';
import { colorOf, connect, InterruptedError, parse, untilInterrupted, UsageError } from './client-support.ts';

/**
 * Exit codes of `ars run --follow`, from the run's terminal event. A refusal
 * of the service or an unreachable gateway is 1 and a bad command line 2, as
 * for every command.
 */
export const RUN_EXIT = {
  completed: 0,
  failed: 3,
  cancelled: 4,
  /** Ctrl-C (or SIGTERM) stopped the following; the run goes on (128 + SIGINT). */
  interrupted: 130,
} as const;

/** How often the progress line of a terminal is redrawn, in ms. */
const TICK_MS = 1000;

interface RunOptions {
  readonly request: StartRequest;
  readonly session: string | undefined;
  readonly follow: boolean;
  readonly json: boolean;
}

function parseRunArgs(args: readonly string[]): RunOptions {
  const { values, positionals } = parse(args, {
    agent: { type: 'string' },
    follow: { type: 'boolean', short: 'f' },
    json: { type: 'boolean' },
    session: { type: 'string' },
    'idempotency-key': { type: 'string' },
    priority: { type: 'string' },
  });
  const query = positionals.join(' ');
  if (query.trim() === '') throw new UsageError('run needs a query, e.g. ars run "summarise the news" --follow');
  const priority = values.priority === undefined ? undefined : Number(values.priority);
  if (priority !== undefined && !Number.isInteger(priority)) throw new UsageError('--priority must be an integer');
  if (values.session === '') throw new UsageError('--session must not be empty');
  return {
    request: {
      query,
      ...(values.agent === undefined ? {} : { agent_id: values.agent }),
      ...(values['idempotency-key'] === undefined ? {} : { idempotency_key: values['idempotency-key'] }),
      ...(priority === undefined ? {} : { priority }),
    },
    session: values.session,
    follow: values.follow === true,
    json: values.json === true,
  };
}

/**
 * `ars run "<query>" [--agent id] [--follow] [--json] [--session id]
 * [--idempotency-key k] [--priority n]`: starts a run. Without --follow it
 * prints the task id (with --json the start's answer). With --follow it
 * renders the run live, or prints its frames as NDJSON with --json, and
 * exits by the terminal status ({@link RUN_EXIT}).
 */
export async function runCommand(io: Io, args: readonly string[]): Promise<number> {
  const options = parseRunArgs(args);
  const client = await connect(io);
  if (!options.follow) {
    const started = await client.start(
      options.request,
      options.session === undefined ? {} : { session: options.session },
    );
    io.stdout(options.json ? `${JSON.stringify(started)}\n` : `${started.task_id}\n`);
    return EXIT.ok;
  }
  return follow(io, client, options);
}

async function follow(io: Io, client: ArsClient, options: RunOptions): Promise<number> {
  const live = io.isTty && !options.json;
  const renderer = createRunRenderer({
    color: colorOf(io),
    live,
    ...(options.session === undefined ? {} : { hintArgs: `--session ${options.session}` }),
  });
  const onEvent = options.json
    ? (frame: EventFrame) => io.stdout(`${JSON.stringify(frame)}\n`)
    : (frame: EventFrame) => io.stdout(renderer.frame(frame));
  const timer = live ? setInterval(() => io.stdout(renderer.tick()), TICK_MS) : undefined;
  let outcome: RunOutcome;
  try {
    outcome = await untilInterrupted((signal) =>
      client.runUntilDone(options.request, {
        onEvent,
        signal,
        ...(options.session === undefined ? {} : { session: options.session }),
      }),
    );
  } catch (error) {
    if (!(error instanceof InterruptedError)) throw error;
    if (!options.json) io.stdout(renderer.interrupt());
    return interrupted(io, renderer, options.session);
  } finally {
    clearInterval(timer);
  }
  if (!options.json) io.stdout(renderer.end(await failureDetail(client, outcome, options.session)));
  return RUN_EXIT[outcome.status];
}

function interrupted(io: Io, renderer: RunRenderer, session: string | undefined): number {
  const taskId = renderer.summary().taskId;
  const suffix = session === undefined ? '' : ` --session ${session}`;
  io.stderr(
    taskId === undefined
      ? 'ars run: stopped following; the run may have started: see ars tasks\n'
      : `ars run: stopped following ${taskId}; the run goes on.\n` +
          `  follow it: ars events --pretty --run ${taskId} --from 0${suffix}\n` +
          `  cancel it: ars cancel ${taskId}${suffix}\n`,
  );
  return RUN_EXIT.interrupted;
}

/** The error message of a failed run (tasks.get), best effort: the error code is already printed. */
async function failureDetail(
  client: ArsClient,
  outcome: RunOutcome,
  session: string | undefined,
): Promise<string | undefined> {
  if (outcome.status !== 'failed') return undefined;
  try {
    const detail = await client.tasks.get({ task_id: outcome.taskId }, session === undefined ? {} : { session });
    return detail.task.error_message;
  } catch {
    return undefined;
  }
}
