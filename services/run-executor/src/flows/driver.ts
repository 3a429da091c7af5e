import { characterCount, FlowDefinition, isServiceError, START_QUERY_MAX_CHARS } from '@ars/contracts';
import { isStoreError, STORE_ERROR_KINDS } from '@ars/store';
import { serveControlInbox } from '@ars/bus';
import type { ControlInboxReply } from '@ars/bus';
import { newTaskRecord } from '../domain/start.ts';
import { newTaskId } from '../domain/task-id.ts';
import { isTerminal } from '../domain/task.ts';
import type { TaskRecord } from '../domain/task.ts';
import { announceRun, ensureSpawned } from '../engine/announce.ts';
import { startedEventId } from '../engine/run-finish.ts';
import { RunLeaseLost } from '../engine/run-signals.ts';
import type { RunExit, RunSignals } from '../engine/run-signals.ts';
import {
  budgetStop,
  cancelChildren,
  cancelFlow,
  complete,
  emit,
  failFlow,
  finish,
  republishTerminal,
  save,
  saveStep,
  stopChildren,
  stored,
} from './flow-context.ts';
import type { FlowContext, FlowDriverDeps } from './flow-context.ts';
import type { FlowRunRecord, FlowStepRecord } from './flow-run.repository.ts';
import {
  childSpawnKey,
  childSpecs,
  exceededAxis,
  FLOW_ERROR_CODES,
  failureHandled,
  joinChildren,
  stepGroupId,
  stepsWouldExceed,
} from './progress.ts';
import type { ChildOutcome } from './progress.ts';
import { flowScope, takeBranch } from './branching.ts';
import { renderTemplate } from './template.ts';

export type { FlowDriverDeps } from './flow-context.ts';

/**
 * The flow driver: runs a flow run's parent task (kind `flow`), claimed from
 * RUNS like any run, so that leases, heartbeats, drain hand-back and
 * redelivery after a crash work as for runs. Each `run` or `parallel` step
 * spawns its children as ordinary runs (`parent_task_id` = the parent,
 * grouped in a task group so that their executors record their answers,
 * idempotency keys per flow run, step, attempt and branch), waits for
 * their outcomes by reading the store every `pollMs`, and records the
 * step's result with the next step's index in one write before going on: a
 * resumed flow starts at the first step not recorded, and a step in flight
 * finds its children again instead of spawning new ones. Budgets are
 * checked at each read. The parent's control inbox takes `cancel` (soft or
 * hard, passed on to the children); it ends the flow `cancelled`.
 */

/** A step's end: the flow goes on, or this claim ends with this exit. */
type StepEnd = { readonly kind: 'next' } | { readonly kind: 'exit'; readonly exit: RunExit };
const NEXT: StepEnd = { kind: 'next' };

const now = () => new Date().toISOString();

/** Runs the flow whose parent task is `task` until it ends or must leave this executor. */
export async function driveFlow(task: TaskRecord, deps: FlowDriverDeps, signals: RunSignals): Promise<RunExit> {
  const log = deps.logger.child({ taskId: task.task_id, component: 'flow' });
  const record = await deps.flowRuns.getByTask(task.task_id);
  if (record === null) {
    log.warn('flow task without its flow run (erased); dropped');
    return { kind: 'done' };
  }
  const ctx: FlowContext = {
    deps,
    signals,
    log: log.child({ flowRunId: record.run_id }),
    task,
    record,
    definition: FlowDefinition.parse(JSON.parse(record.definition_json)),
    input: JSON.parse(record.input_json) as Record<string, unknown>,
    identity: { tenant: task.tenant, user: task.user, session: task.session, run: task.task_id },
  };
  if (isTerminal(task.status)) return republishTerminal(ctx);
  if (record.outcome !== undefined) return finish(ctx, record.outcome);
  const prior = await deps.tasks.markRunning(task.task_id);
  if (prior === null) return { kind: 'done' };
  if (prior === 'pending') await ensureSpawned(deps, task);
  if (prior === 'pending' || !(await stored(ctx, startedEventId(task.task_id)))) {
    await emit(ctx, 'task.started', { TaskID: task.task_id, PriorState: 'pending' }, startedEventId(task.task_id));
  }
  if (record.status !== 'running') await save(ctx, { status: 'running' });
  const inbox = serveControlInbox(deps.bus, task.task_id, (body, reply) => onControl(ctx, body, reply));
  try {
    return await steps(ctx);
  } catch (error) {
    return await failed(ctx, error);
  } finally {
    inbox.close();
  }
}

/** How long a flow run interrupted by a failing store or bus waits before its message comes back, in ms. */
const RETRY_DELAY_MS = 5_000;

function isTransient(error: unknown): boolean {
  if (isStoreError(error)) return error.kind !== STORE_ERROR_KINDS.invalid;
  return isServiceError(error) && (error.code === 'unavailable' || error.code === 'timeout');
}

/** A step that threw: a lost lease leaves quietly, a transient failure retries, anything else fails the flow `internal`. */
async function failed(ctx: FlowContext, error: unknown): Promise<RunExit> {
  const { signals, log } = ctx;
  if (error instanceof RunLeaseLost || signals.exitRequest !== undefined) return signals.exit();
  if (isTransient(error) || signals.terminated) {
    log.warn({ err: error }, 'flow run interrupted; it will be retried');
    return { kind: 'retry', delayMs: RETRY_DELAY_MS };
  }
  log.error({ err: error }, 'flow run failed');
  try {
    await stopChildren(ctx, { reason: 'the flow run failed', hard: true });
    return await failFlow(ctx, 'internal');
  } catch (again) {
    log.warn({ err: again }, 'flow run could not be ended; it will be retried');
    return { kind: 'retry', delayMs: RETRY_DELAY_MS };
  }
}

/** The parent's inbox: `cancel` only (a flow has no planner to steer). */
function onControl(ctx: FlowContext, body: unknown, reply: (answer: ControlInboxReply) => void): void {
  const envelope = (typeof body === 'object' && body !== null ? body : {}) as {
    method?: unknown;
    payload?: { hard?: unknown };
    cascade?: { reason?: unknown };
  };
  if (envelope.method !== 'cancel') {
    reply({ accepted: false, code: 'invalid_request', message: 'a flow run takes cancel only' });
    return;
  }
  if (ctx.signals.terminated) {
    reply({ accepted: false, code: 'not_found', message: 'the flow run ended' });
    return;
  }
  reply({ accepted: true });
  const hard = envelope.payload?.hard === true;
  const reason = typeof envelope.cascade?.reason === 'string' ? envelope.cascade.reason : 'cancel requested';
  void emit(ctx, 'control.received', { Type: 'cancel', Outcome: 'received', Err: '' }).catch(() => undefined);
  ctx.signals.requestCancel({ reason, cascaded: envelope.cascade !== undefined, hard });
}

async function steps(ctx: FlowContext): Promise<RunExit> {
  const { record, definition } = ctx;
  for (;;) {
    const stop = await interruption(ctx);
    if (stop !== undefined) return stop;
    if (record.cursor >= definition.steps.length) return complete(ctx);
    const index = record.cursor;
    const end =
      definition.steps[index]?.type === 'branch'
        ? await takeBranch(ctx.record, definition, index, (progress) => save(ctx, progress))
        : await runStep(ctx, index);
    if (end === 'fail') return failFlow(ctx, FLOW_ERROR_CODES.stepFailed);
    if (typeof end === 'object' && end.kind === 'exit') return end.exit;
  }
}

/** What stops the flow between reads: a hand-back, a drain, a cancel, its wall-time budget. */
async function interruption(ctx: FlowContext): Promise<RunExit | undefined> {
  const { signals, record } = ctx;
  if (signals.exitRequest !== undefined) return signals.exit();
  if (signals.draining) {
    // Nothing is lost by leaving: the next executor reads the same record and finds the same children.
    signals.requestHandback();
    return signals.exit();
  }
  const cancel = signals.cancel;
  if (cancel !== undefined) return cancelFlow(ctx, cancel);
  record.usage = { ...record.usage, wall_time_ms: Date.now() - Date.parse(record.started_at) };
  const axis = exceededAxis(ctx.definition.budget, record.usage);
  return axis === undefined ? undefined : budgetStop(ctx, axis);
}

/** Runs (or resumes) run or parallel step `index` until its children are joined. */
async function runStep(ctx: FlowContext, index: number): Promise<StepEnd> {
  const { record, definition } = ctx;
  const step = definition.steps[index];
  let state = record.steps[index];
  if (step === undefined || state === undefined) throw new Error(`flow step ${index} is not stored`);
  const specs = childSpecs(step);
  if (state.status === 'pending') {
    if (stepsWouldExceed(definition.budget, record.usage.steps, specs.length)) {
      return { kind: 'exit', exit: await budgetStop(ctx, 'steps') };
    }
    const queries = specs.map((spec) => renderTemplate(spec.query, flowScope(ctx.record, ctx.definition, ctx.input)));
    if (queries.some((q) => q.trim() === '' || characterCount(q, START_QUERY_MAX_CHARS) > START_QUERY_MAX_CHARS)) {
      state = { ...state, status: 'failed', error_code: FLOW_ERROR_CODES.queryInvalid, ended_at: now() };
      await saveStep(ctx, index, state, {});
      return { kind: 'exit', exit: await failFlow(ctx, FLOW_ERROR_CODES.queryInvalid) };
    }
    await ctx.deps.groups.create(
      {
        group_id: stepGroupId(ctx.task.task_id, step.id, state.attempt),
        owner_task_id: ctx.task.task_id,
        tenant: ctx.task.tenant,
        user: ctx.task.user,
        session: ctx.task.session,
        fail_fast: false,
        retain_turn: true,
        description: `flow ${record.flow_id} step ${step.id}`,
      },
      now(),
    );
    state = { ...state, status: 'running', started_at: now() };
    await saveStep(ctx, index, state, { usage: { ...record.usage, steps: record.usage.steps + specs.length } });
  }
  if (state.child_task_ids.length < specs.length) {
    state = { ...state, child_task_ids: await spawnChildren(ctx, index, state) };
    await saveStep(ctx, index, state, {});
  }
  return joinStep(ctx, index, state);
}

/** Inserts (or finds again) and announces each child of a step, in branch order; returns their task ids. */
async function spawnChildren(ctx: FlowContext, index: number, state: FlowStepRecord): Promise<string[]> {
  const { task, definition, record, deps } = ctx;
  const step = definition.steps[index];
  if (step === undefined) return [];
  const scope = flowScope(record, definition, ctx.input);
  const groupId = stepGroupId(task.task_id, step.id, state.attempt);
  const ids: string[] = [];
  for (const [branch, spec] of childSpecs(step).entries()) {
    const agentId = spec.agent_id ?? definition.agent_id;
    const child = newTaskRecord({
      taskId: newTaskId(),
      triple: task,
      request: {
        identity: {},
        query: renderTemplate(spec.query, scope),
        priority: task.priority,
        idempotency_key: childSpawnKey(record.run_id, step.id, state.attempt, branch),
      },
      agent: agentId === undefined ? {} : { agent_id: agentId },
      artifacts: [],
      now: now(),
    });
    ctx.signals.assertLease();
    const { task: stored, reused } = await deps.tasks.insertTask({
      ...child,
      parent_task_id: task.task_id,
      group_id: groupId,
    });
    // A child a dead executor inserted may never have been announced: announcing again is deduplicated.
    if (!reused || (stored.status === 'pending' && stored.spawned_sequence === undefined)) {
      await announceRun(deps, stored);
    }
    ids.push(stored.task_id);
  }
  return ids;
}

/** Each child's outcome (its answer from the step's group), and its tokens and cost so far. */
async function readChildren(ctx: FlowContext, state: FlowStepRecord, groupId: string) {
  const [group, rows] = await Promise.all([
    ctx.deps.groups.get(groupId),
    Promise.all(state.child_task_ids.map((id) => ctx.deps.tasks.getTask(id))),
  ]);
  let tokens = 0;
  let cost = 0;
  const outcomes = state.child_task_ids.map((id, i): ChildOutcome | undefined => {
    const row = rows[i];
    if (row === null || row === undefined) return { status: 'cancelled', error_code: 'cancelled' };
    tokens += row.steps.reduce((sum, s) => sum + s.tokens_in + s.tokens_out, 0);
    cost += row.cost_usd;
    if (!isTerminal(row.status)) return undefined;
    const recorded = group?.outcomes?.[id];
    const status = row.status as ChildOutcome['status'];
    if (recorded !== undefined && recorded.status === status) return recorded;
    return { status, ...(row.error_code === undefined ? {} : { error_code: row.error_code }) };
  });
  return { outcomes, tokens, cost };
}

/** Waits for a step's join, keeping its usage and the budgets up to date; records its result. */
async function joinStep(ctx: FlowContext, index: number, running: FlowStepRecord): Promise<StepEnd> {
  const { record, definition, signals } = ctx;
  const step = definition.steps[index];
  if (step === undefined || step.type === 'branch') throw new Error(`flow step ${index} has no children`);
  const groupId = stepGroupId(ctx.task.task_id, step.id, running.attempt);
  const base = usageBefore(record, index);
  for (;;) {
    const { outcomes, tokens, cost } = await readChildren(ctx, running, groupId);
    const state: FlowStepRecord = { ...running, tokens, cost_usd: cost };
    record.steps[index] = state;
    record.usage = { ...record.usage, tokens: base.tokens + tokens, cost_usd: base.cost_usd + cost };
    const stop = await interruption(ctx);
    if (stop !== undefined) return { kind: 'exit', exit: stop };
    const decision = joinChildren(step.type === 'parallel' ? step.join : 'all', outcomes);
    if (decision.kind === 'completed') {
      await cancelChildren(
        ctx,
        decision.cancel.map((i) => running.child_task_ids[i] ?? ''),
        {
          reason: `flow step ${step.id} joined another branch`,
          hard: true,
        },
      );
      const done = { ...state, status: 'completed' as const, answer: decision.answer, answers: decision.answers };
      await saveStep(ctx, index, { ...done, ended_at: now() }, { cursor: index + 1 });
      return NEXT;
    }
    if (decision.kind === 'failed') {
      const failed = {
        ...state,
        status: 'failed' as const,
        answers: decision.answers,
        error_code: decision.error_code,
      };
      const handled = failureHandled(definition.steps, index);
      await saveStep(ctx, index, { ...failed, ended_at: now() }, handled ? { cursor: index + 1 } : {});
      if (handled) return NEXT;
      return { kind: 'exit', exit: await failFlow(ctx, FLOW_ERROR_CODES.stepFailed) };
    }
    await signals.sleep(ctx.deps.pollMs);
  }
}

/** Tokens and cost of the steps other than `index`. */
function usageBefore(record: FlowRunRecord, index: number): { tokens: number; cost_usd: number } {
  return record.steps.reduce(
    (sum, s, i) =>
      i === index ? sum : { tokens: sum.tokens + (s.tokens ?? 0), cost_usd: sum.cost_usd + (s.cost_usd ?? 0) },
    { tokens: 0, cost_usd: 0 },
  );
}
