import { TERMINAL_TASK_STATUSES } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { ControlDeliveryError, requestControl } from '@ars/bus';
import type { Bus } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import { BACKGROUND_KIND } from '../domain/task.ts';
import type { TaskRecord } from '../domain/task.ts';
import type { RunStateRepository, TerminalOutcome } from '../store/run-state.repository.ts';
import type { TaskRepository } from '../store/task.repository.ts';
import { runCompletionHook } from './completion-hook.ts';
import { closeControlInbox } from './controls.ts';
import { occurredAt } from './run-events.ts';
import type { RunEvents } from './run-events.ts';
import type { RunState } from './run-state.ts';
import type { StoredEventIds } from './stored-events.ts';

/**
 * How a run ends: the terminal event of an outcome (saved in the run state,
 * then the task row is marked, then the event published once), its
 * re-publication when a crash fell between marking the task and publishing,
 * and the cascade of a cancellation to child tasks.
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
 * A claimed task is already terminal: its executor may have died after
 * marking it and before its terminal event was stored. The outcome is the
 * one the run state kept (every finish saves it before marking the task and
 * drops it once the event is stored); without one, a completion or failure
 * is read off the task row (a task ended by an earlier version), and a
 * cancellation has nothing to publish (an erasure ended it, or its event is
 * out). The terminal event is published, under its fixed id, only if the
 * stream does not hold it: however late the redelivery, past the stream's
 * duplicate window too, the run has exactly one. Open pauses are ended
 * first and a completion's answer joins the session's turns, as the dead
 * executor would have done. Then the run state is dropped. Throws when the
 * store or the stream cannot be read or written (the run is retried; the
 * run state stays).
 */
export async function republishTerminal(
  task: TaskRecord,
  runStates: RunStateRepository,
  events: RunEvents,
  storedEvents: StoredEventIds,
): Promise<void> {
  const saved = await runStates.load(task.task_id);
  const outcome = saved?.terminal ?? rowOutcome(task);
  // What the dead executor may not have done yet: open pauses end before the terminal event (as in
  // finishRun), and a completion's answer joins the session's turns. Both are idempotent.
  await runStates.resolveAllPauses(task.task_id, 'ended', occurredAt());
  if (outcome !== undefined) {
    const eventId = terminalEventId(task.task_id);
    const stored = await storedEvents(events.identity, task.spawned_sequence ?? 0);
    if (!stored.has(eventId)) {
      const { type, payload } = terminalEvent(task.task_id, outcome);
      await events.emitNow(type, payload, eventId);
    }
  }
  if (outcome?.status === 'complete' && saved?.answer !== undefined) {
    await recordTurn(runStates, task, saved.answer);
  }
  if (saved !== null) await runStates.remove(task.task_id);
}

/** Adds a completed run's query and answer to its session's earlier turns (the prompts of its later runs). */
function recordTurn(runStates: RunStateRepository, task: TaskRecord, answer: string): Promise<void> {
  const background = task.kind === BACKGROUND_KIND ? { background: true } : {};
  const turn = { task_id: task.task_id, query: task.query, answer, at: occurredAt(), ...background };
  return runStates.appendSessionTurn({ tenant: task.tenant, user: task.user, session: task.session }, turn);
}

/** The outcome a terminal task row tells by itself: a completion or a failure (a cancellation's reason is not in it). */
function rowOutcome(task: TaskRecord): TerminalOutcome | undefined {
  if (task.status !== 'complete' && task.status !== 'failed') return undefined;
  return { status: task.status, ...(task.error_code === undefined ? {} : { error_code: task.error_code }) };
}

/** What a cascading parent sends to a child's inbox (beside the API side's envelope members). */
export interface CascadeEnvelope {
  readonly method: 'cancel';
  readonly payload: { readonly hard: boolean };
  readonly event_id: string;
  readonly cascade: { readonly parent_task_id: string; readonly reason: string };
}

/** How long a cascading parent waits for a child's inbox to answer. */
const CASCADE_REPLY_MS = 2_000;

/** Whether a child's live inbox took the cancellation; false when it has none (or it did not answer). */
async function requestInbox(bus: Bus, taskId: string, envelope: CascadeEnvelope): Promise<boolean> {
  try {
    await requestControl(bus, taskId, envelope, { timeoutMs: CASCADE_REPLY_MS });
    return true;
  } catch (error) {
    if (error instanceof ControlDeliveryError) return false;
    throw error;
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
  await Promise.all(page.items.map((child) => cancelChild(deps, parent.task_id, child, { reason, hard }))).catch(
    (error: unknown) => deps.logger.warn({ err: error, taskId: parent.task_id }, 'cancel cascade incomplete'),
  );
}

/**
 * Cancels one child of run `parentTaskId` with Cascaded true: on its live
 * inbox, else by a marker in its run state applied when it is claimed (the
 * inbox is asked once more after the marker, in case it opened meanwhile).
 */
export async function cancelChild(
  deps: { readonly bus: Bus; readonly runStates: RunStateRepository },
  parentTaskId: string,
  child: TaskRecord,
  { reason, hard }: { readonly reason: string; readonly hard: boolean },
): Promise<void> {
  const envelope: CascadeEnvelope = {
    method: 'cancel',
    payload: { hard },
    event_id: `cascade:${parentTaskId}`,
    cascade: { parent_task_id: parentTaskId, reason },
  };
  if (await requestInbox(deps.bus, child.task_id, envelope)) return;
  const owner = { tenant: child.tenant, user: child.user, session: child.session };
  await deps.runStates.markCancel(child.task_id, owner, { reason, cascaded: true });
  await requestInbox(deps.bus, child.task_id, envelope);
}

/** The identity a run acts as toward other services: its owner's triple, no scopes. */
export function ownerIdentity(task: TaskRecord): VerifiedIdentity {
  return { tenant: task.tenant, user: task.user, session: task.session, scopes: [] };
}

/**
 * Ends a run: saves the outcome in the run state (so that a crash anywhere
 * after this ends the run the same way: {@link republishTerminal}, or the
 * redelivered run's setup), marks the task (the repository's
 * exactly-one-terminal guard); only if this call won, ends its open pauses,
 * publishes the terminal event, then tidies up (the session's turns,
 * children of a cancelled run); drops the run state once the event is stored.
 * From the first line on, the run's LLM, tool and planner events are dropped
 * and its inbox is closed.
 */
export async function finishRun(run: RunState, outcome: TerminalOutcome, answer?: string): Promise<void> {
  if (run.signals.terminated) return;
  run.signals.assertLease();
  run.signals.markTerminated();
  // Read now: controls queued behind this point meet a terminated run and are rejected `run_ended`.
  const dropped = run.controlsQueued;
  // Its last call's cost goes out now, before the end can be seen (a completion also waits for it: run-step).
  run.costs.sendHeld();
  run.events.seal();
  closeControlInbox(run);
  clearTimeout(run.approvalTimer);
  clearTimeout(run.authTimer);
  const { tasks, runStates } = run.deps;
  await runStates.finish(run.taskId, run.owner, outcome, undefined, answer);
  // A group member's outcome is in its group before its task is terminal: the owner that sees the row sees the answer.
  if (run.task.group_id !== undefined) await recordMemberOutcome(run, run.task.group_id, outcome, answer);
  const error = outcome.error_code === undefined ? undefined : { code: outcome.error_code };
  run.signals.assertLease();
  const won = await tasks.markTerminal(run.taskId, outcome.status, error);
  if (won) {
    // Before the terminal event: a pause.list snapshot whose sequence is at or past it lists no pause of the run.
    if (run.pausesOpened) {
      await runStates
        .resolveAllPauses(run.taskId, 'ended', occurredAt())
        .catch((e: unknown) => run.log.warn({ err: e }, 'open pauses not ended; the redelivered run ends them'));
    }
    if (outcome.status === 'cancelled' && run.signals.cancel?.hard === true) {
      const cancelled = { RunID: run.taskId, CancelledAt: Date.now(), DroppedEnvelopeCount: dropped };
      run.events.emit('runtime.run_cancelled', cancelled, `${run.taskId}:runtime.run_cancelled`);
    }
    const { type, payload } = terminalEvent(run.taskId, outcome);
    const flushed = run.events
      .flush()
      .catch((e: unknown) => run.log.warn({ err: e }, 'run events were not all stored'));
    await Promise.all([flushed, run.events.emitNow(type, payload, terminalEventId(run.taskId))]);
    await Promise.all([afterTerminal(run, outcome, answer), completionHook(run, outcome, answer)]);
  }
  await runStates.remove(run.taskId);
}

function recordMemberOutcome(run: RunState, groupId: string, outcome: TerminalOutcome, answer?: string) {
  return run.deps.groups.recordOutcome(groupId, run.taskId, {
    status: outcome.status,
    ...(outcome.status === 'complete' && answer !== undefined ? { answer } : {}),
    ...(outcome.error_code === undefined ? {} : { error_code: outcome.error_code }),
  });
}

/** The agent's completion hook, once the terminal event is stored; only the run that won `markTerminal` gets here. */
function completionHook(run: RunState, outcome: TerminalOutcome, answer: string | undefined): Promise<void> {
  if (run.completionHook === undefined) return Promise.resolve();
  const hookRun = {
    taskId: run.taskId,
    owner: run.owner,
    outcome: outcome.status,
    answer,
    transcript: run.checkpoint.messages,
  };
  return runCompletionHook(run.completionHook, hookRun, {
    emit: (type, payload, eventId) => run.events.emitNow(type, payload, eventId),
    timeoutMs: run.deps.settings.completionHookTimeoutMs,
    log: run.log,
  });
}

async function afterTerminal(run: RunState, outcome: TerminalOutcome, answer: string | undefined): Promise<void> {
  const { runStates } = run.deps;
  const jobs: Promise<unknown>[] = [];
  if (outcome.status === 'complete' && answer !== undefined) {
    jobs.push(recordTurn(runStates, run.task, answer));
  }
  if (outcome.status === 'cancelled') jobs.push(cascadeCancel(run.deps, run.task, run.signals.cancel?.hard ?? false));
  for (const result of await Promise.allSettled(jobs)) {
    if (result.status === 'rejected') run.log.warn({ err: result.reason }, 'post-run bookkeeping failed');
  }
}
