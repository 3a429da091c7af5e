import type { Bus, EventPublisher } from '@ars/bus';
import type { FlowDefinition } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import type { TaskRecord } from '../domain/task.ts';
import { isTerminal } from '../domain/task.ts';
import { TERMINAL_TASK_STATUSES } from '@ars/contracts';
import type { FlowBudgetAxis } from '@ars/contracts';
import { cancelChild, terminalEvent, terminalEventId } from '../engine/run-finish.ts';
import type { CancelRequest, RunExit, RunSignals } from '../engine/run-signals.ts';
import type { StoredEventIds } from '../engine/stored-events.ts';
import type { RunStateRepository } from '../store/run-state.repository.ts';
import type { TaskGroupRepository } from '../store/task-group.repository.ts';
import type { TaskRepository } from '../store/task.repository.ts';
import type { FlowOutcomeRecord, FlowRunRecord, FlowRunRepository, FlowStepRecord } from './flow-run.repository.ts';
import { FLOW_ERROR_CODES } from './progress.ts';

/**
 * A flow run's claim as the driver holds it, and how a flow ends: its
 * writes (one update per step), its events (under the parent run), the
 * stop of its children, and its terminal outcome (saved, marked, published
 * once). See `driver.ts`.
 */

/** What the driver needs. */
export interface FlowDriverDeps {
  readonly bus: Bus;
  readonly publisher: EventPublisher;
  readonly tasks: TaskRepository;
  readonly runStates: RunStateRepository;
  readonly groups: TaskGroupRepository;
  readonly flowRuns: FlowRunRepository;
  readonly storedEvents: StoredEventIds;
  readonly logger: Logger;
  /** How often a step's children are read, in ms. */
  readonly pollMs: number;
}

/** One claim of a flow run. */
export interface FlowContext {
  readonly deps: FlowDriverDeps;
  readonly signals: RunSignals;
  readonly log: Logger;
  readonly task: TaskRecord;
  readonly record: FlowRunRecord;
  readonly definition: FlowDefinition;
  readonly input: Record<string, unknown>;
  readonly identity: { tenant: string; user: string; session: string; run: string };
}

const now = () => new Date().toISOString();

export async function cancelChildren(
  ctx: FlowContext,
  taskIds: readonly string[],
  how: { readonly reason: string; readonly hard: boolean },
): Promise<void> {
  const rows = await Promise.all(taskIds.filter((id) => id !== '').map((id) => ctx.deps.tasks.getTask(id)));
  await Promise.all(
    rows.map((row) =>
      row === null || isTerminal(row.status) ? undefined : cancelChild(ctx.deps, ctx.task.task_id, row, how),
    ),
  );
}

/** Cancels every child still running and marks the running step `status`. */
export async function stopChildren(ctx: FlowContext, how: { reason: string; hard: boolean }): Promise<void> {
  const page = await ctx.deps.tasks.listTasks(
    { parent_task_id: ctx.task.task_id, status: { $nin: [...TERMINAL_TASK_STATUSES] } },
    { limit: 500 },
  );
  await cancelChildren(
    ctx,
    page.items.map((t) => t.task_id),
    how,
  );
  const index = ctx.record.steps.findIndex((s) => s.status === 'running');
  const state = ctx.record.steps[index];
  if (state !== undefined) await saveStep(ctx, index, { ...state, status: 'cancelled', ended_at: now() }, {});
}

export async function budgetStop(ctx: FlowContext, axis: FlowBudgetAxis): Promise<RunExit> {
  ctx.log.info({ axis, usage: ctx.record.usage }, 'flow budget exceeded');
  await emit(
    ctx,
    'flow.budget_exceeded',
    { FlowName: ctx.record.flow_name, Axis: axis },
    `${ctx.task.task_id}:flow.budget_exceeded`,
  );
  await stopChildren(ctx, { reason: `flow budget exceeded (${axis})`, hard: true });
  await save(ctx, { budget_axis: axis });
  return finish(ctx, { status: 'failed', error_code: FLOW_ERROR_CODES.budgetExceeded });
}

export async function cancelFlow(ctx: FlowContext, cancel: CancelRequest): Promise<RunExit> {
  await stopChildren(ctx, { reason: `flow run cancelled: ${cancel.reason}`, hard: cancel.hard });
  await emit(ctx, 'control.applied', {
    Type: 'cancel',
    Outcome: cancel.hard ? 'hard_cancel' : 'cancel_at_next_boundary',
    Err: '',
  });
  return finish(ctx, { status: 'cancelled', reason: cancel.reason });
}

export function failFlow(ctx: FlowContext, code: string): Promise<RunExit> {
  return finish(ctx, { status: 'failed', error_code: code });
}

export function complete(ctx: FlowContext): Promise<RunExit> {
  return finish(ctx, { status: 'complete' });
}

/** The flow's answer: its last completed step's. */
function flowAnswer(record: FlowRunRecord): string | undefined {
  return record.steps.findLast((s) => s.status === 'completed' && s.type !== 'branch')?.answer;
}

/**
 * Ends the flow: the outcome saved in its record first (a crash after this
 * ends it the same way), then the parent task marked, then its terminal
 * event (fixed id) by the call that won the mark.
 */
export async function finish(ctx: FlowContext, outcome: FlowOutcomeRecord): Promise<RunExit> {
  const { signals, task, record } = ctx;
  signals.assertLease();
  signals.markTerminated();
  const answer = flowAnswer(record);
  await save(ctx, {
    outcome,
    status: outcome.status,
    ended_at: record.ended_at ?? now(),
    ...(outcome.error_code === undefined ? {} : { error_code: outcome.error_code }),
    ...(answer === undefined || outcome.status !== 'complete' ? {} : { answer }),
  });
  const error = outcome.error_code === undefined ? undefined : { code: outcome.error_code };
  const won = await ctx.deps.tasks.markTerminal(task.task_id, outcome.status, error);
  if (won) await publishTerminal(ctx, outcome);
  ctx.log.info({ status: outcome.status, errorCode: outcome.error_code }, 'flow run ended');
  return { kind: 'done' };
}

async function publishTerminal(ctx: FlowContext, outcome: FlowOutcomeRecord): Promise<void> {
  const { type, payload } = terminalEvent(ctx.task.task_id, { ...outcome, cascaded: false });
  await emit(ctx, type, payload, terminalEventId(ctx.task.task_id));
}

/** A parent claimed terminal: its terminal event is published if the stream lacks it (a crash after the mark). */
export async function republishTerminal(ctx: FlowContext): Promise<RunExit> {
  ctx.signals.markTerminated();
  const outcome = ctx.record.outcome;
  if (outcome !== undefined && !(await stored(ctx, terminalEventId(ctx.task.task_id)))) {
    await publishTerminal(ctx, outcome);
  }
  return { kind: 'done' };
}

export async function stored(ctx: FlowContext, eventId: string): Promise<boolean> {
  return (await ctx.deps.storedEvents(ctx.identity, ctx.task.spawned_sequence ?? 0)).has(eventId);
}

export async function emit(
  ctx: FlowContext,
  type: string,
  payload: Record<string, unknown>,
  eventId?: string,
): Promise<void> {
  if (!ctx.signals.leaseHeld()) return;
  await ctx.deps.publisher.publish({
    type,
    identity: ctx.identity,
    payload,
    ...(eventId === undefined ? {} : { eventId }),
  });
}

export async function save(ctx: FlowContext, progress: Parameters<FlowRunRepository['update']>[1]): Promise<void> {
  ctx.signals.assertLease();
  Object.assign(ctx.record, progress);
  await ctx.deps.flowRuns.update(ctx.record.run_id, { ...progress, usage: ctx.record.usage });
}

/** Records step `index`'s state (and any other progress) in one write. */
export async function saveStep(
  ctx: FlowContext,
  index: number,
  state: FlowStepRecord,
  progress: Parameters<FlowRunRepository['update']>[1],
): Promise<void> {
  const steps = ctx.record.steps.map((s, i) => (i === index ? state : s));
  await save(ctx, { ...progress, steps });
}
