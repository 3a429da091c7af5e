import { TERMINAL_TASK_STATUSES } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { controlSubject, DUPLICATE_WINDOW_MS } from '@ars/bus';
import type { Bus } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { TaskRecord } from '../domain/task.ts';
import type { RunStateRepository, TerminalOutcome } from '../store/run-state.repository.ts';
import type { TaskRepository } from '../store/task.repository.ts';
import { occurredAt } from './run-events.ts';
import type { RunEvents } from './run-events.ts';
import type { RunLoop } from './run-loop.ts';

/**
 * How a run ends: the terminal event of an outcome (published once, after the
 * task row is marked), its re-publication when a crash fell between marking
 * the task and publishing, and the cascade of a cancellation to child tasks.
 */

/** The fixed event id of a run's terminal event: a re-publication is dropped by the stream's duplicate window. */
export function terminalEventId(taskId: string): string {
  return `${taskId}:terminal`;
}

/** The fixed event id of a run's `task.started`. */
export function startedEventId(taskId: string): string {
  return `${taskId}:task.started`;
}

/** The terminal event of an outcome. */
export function terminalEvent(
  taskId: string,
  outcome: TerminalOutcome,
): { type: string; payload: Record<string, unknown> } {
  switch (outcome.status) {
    case 'complete':
      return {
        type: 'task.completed',
        payload: { TaskID: taskId, NotifyOnComplete: outcome.notify_on_complete ?? false },
      };
    case 'failed':
      return { type: 'task.failed', payload: { TaskID: taskId, ErrorCode: outcome.error_code ?? 'internal' } };
    case 'cancelled':
      return {
        type: 'task.cancelled',
        payload: { TaskID: taskId, Reason: outcome.reason ?? 'cancelled', Cascaded: outcome.cascaded ?? false },
      };
  }
}

/**
 * A claimed task is already terminal: its executor died after marking it and
 * maybe before publishing. Publishes the terminal event again under its fixed
 * id (the stream drops it if it was stored within the duplicate window) when
 * the run state still records the outcome, or when the task ended recently
 * enough for the window to catch a duplicate; then drops the run state.
 */
export async function republishTerminal(
  task: TaskRecord,
  runStates: RunStateRepository,
  events: RunEvents,
): Promise<void> {
  const saved = await runStates.load(task.task_id);
  const ended = task.ended_at === undefined ? 0 : Date.parse(task.ended_at);
  const recent = Date.now() - ended < DUPLICATE_WINDOW_MS * 0.75;
  const outcome: TerminalOutcome | undefined =
    saved?.terminal ??
    (recent && task.status !== 'pending' && task.status !== 'running' && task.status !== 'paused'
      ? { status: task.status, ...(task.error_code === undefined ? {} : { error_code: task.error_code }) }
      : undefined);
  if (outcome !== undefined) {
    const { type, payload } = terminalEvent(task.task_id, outcome);
    await events.emitNow(type, payload, terminalEventId(task.task_id));
  }
  if (saved !== null) await runStates.remove(task.task_id);
}

/** What a cascading parent sends to a child's inbox (beside the API side's envelope members). */
export interface CascadeEnvelope {
  readonly method: 'cancel';
  readonly payload: { readonly hard: boolean };
  readonly event_id: string;
  readonly cascade: { readonly parent_task_id: string; readonly reason: string };
}

const encoder = new TextEncoder();

async function requestInbox(bus: Bus, taskId: string, envelope: CascadeEnvelope): Promise<boolean> {
  try {
    await bus.nc.request(controlSubject(taskId), encoder.encode(JSON.stringify(envelope)), { timeout: 2_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Cancels the live or pending children of a cancelled run, with Cascaded
 * true. A live child gets the cancellation on its inbox; a child without one
 * gets a marker in its run state, applied when it is claimed (the inbox is
 * asked once more after the marker, in case the child opened it meanwhile).
 */
export async function cascadeCancel(
  deps: {
    readonly bus: Bus;
    readonly tasks: TaskRepository;
    readonly runStates: RunStateRepository;
    readonly logger: Logger;
  },
  parent: TaskRecord,
  hard: boolean,
): Promise<void> {
  const page = await deps.tasks.listTasks(
    { parent_task_id: parent.task_id, status: { $nin: [...TERMINAL_TASK_STATUSES] } },
    { limit: 500 },
  );
  const reason = `parent task ${parent.task_id} was cancelled`;
  await Promise.all(
    page.items.map(async (child) => {
      const envelope: CascadeEnvelope = {
        method: 'cancel',
        payload: { hard },
        event_id: `cascade:${parent.task_id}`,
        cascade: { parent_task_id: parent.task_id, reason },
      };
      if (await requestInbox(deps.bus, child.task_id, envelope)) return;
      const owner = { tenant: child.tenant, user: child.user, session: child.session };
      await deps.runStates.markCancel(child.task_id, owner, { reason, cascaded: true });
      await requestInbox(deps.bus, child.task_id, envelope);
    }),
  ).catch((error: unknown) => deps.logger.warn({ err: error, taskId: parent.task_id }, 'cancel cascade incomplete'));
}

/** The identity a run acts as toward other services: its owner's triple, no scopes. */
export function ownerIdentity(task: TaskRecord): VerifiedIdentity {
  return { tenant: task.tenant, user: task.user, session: task.session, scopes: [] };
}

/**
 * Ends a run: records a cancellation's details (for a re-publication), marks
 * the task (the repository's exactly-one-terminal guard), publishes the
 * terminal event only if this call won, then tidies up (open pauses, the
 * session's turns, children of a cancelled run) and drops the checkpoint.
 * From the first line on, the run's LLM, tool and planner events are dropped
 * and its inbox is closed.
 */
export async function finishRun(run: RunLoop, outcome: TerminalOutcome, answer?: string): Promise<void> {
  if (run.terminated) return;
  run.terminated = true;
  // Its last call's cost goes out now, before the end can be seen (a completion also waits for it: run-step).
  run.sendHeldCost();
  run.events.seal();
  run.closeInbox();
  clearTimeout(run.approvalTimer);
  const { tasks, runStates } = run.deps;
  // Only a cancellation needs its details kept for a re-publication; the others are in the task row.
  if (outcome.status === 'cancelled') await runStates.finish(run.taskId, run.owner, outcome);
  const error = outcome.error_code === undefined ? undefined : { code: outcome.error_code };
  const won = await tasks.markTerminal(run.taskId, outcome.status, error);
  if (won) {
    const { type, payload } = terminalEvent(run.taskId, outcome);
    const flushed = run.events
      .flush()
      .catch((e: unknown) => run.log.warn({ err: e }, 'run events were not all stored'));
    await Promise.all([flushed, run.events.emitNow(type, payload, terminalEventId(run.taskId))]);
    await afterTerminal(run, outcome, answer);
  }
  await runStates.remove(run.taskId);
}

async function afterTerminal(run: RunLoop, outcome: TerminalOutcome, answer: string | undefined): Promise<void> {
  const { runStates } = run.deps;
  const jobs: Promise<unknown>[] = [];
  if (run.pausesOpened) jobs.push(runStates.resolveAllPauses(run.taskId, 'ended', occurredAt()));
  if (outcome.status === 'complete' && answer !== undefined) {
    const turn = { task_id: run.taskId, query: run.task.query, answer, at: occurredAt() };
    jobs.push(runStates.appendSessionTurn(run.owner, turn));
  }
  if (outcome.status === 'cancelled') jobs.push(cascadeCancel(run.deps, run.task, run.cancel?.hard ?? false));
  for (const result of await Promise.allSettled(jobs)) {
    if (result.status === 'rejected') run.log.warn({ err: result.reason }, 'post-run bookkeeping failed');
  }
}
