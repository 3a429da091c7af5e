import { isServiceError } from '@ars/contracts';
import { isStoreError, STORE_ERROR_KINDS } from '@ars/store';
import type { Logger } from '@ars/telemetry';
import { isTerminal } from '../domain/task.ts';
import type { TaskRecord } from '../domain/task.ts';
import type { RunStateRecord } from '../store/run-state.repository.ts';
import { AgentConfigRefused } from './agent-config.ts';
import { closeControlInbox, openControlInbox } from './controls.ts';
import { LlmCallRefused } from './governance.ts';
import { ProviderFailure } from './llm-call.ts';
import { lastToolOf, RUN_ERROR_CODES, stepLimitReached } from './planner.ts';
import { occurredAt } from './run-events.ts';
import { finishRun, republishTerminal, startedEventId } from './run-finish.ts';
import { prepareRun } from './run-prepare.ts';
import type { PreparedRun } from './run-prepare.ts';
import { RunSignals } from './run-signals.ts';
import type { RunExit } from './run-signals.ts';
import { createRunState } from './run-state.ts';
import type { RunDeps, RunState } from './run-state.ts';
import { annotateRun, linkAttempts } from './run-spans.ts';
import { runStep } from './run-step.ts';
import { runtimeErrorEventId, runtimeErrorPayload } from './runtime-error.ts';

/**
 * One run on this executor: claim, planner steps, controls' effects, and
 * exactly one terminal event. Steps are checkpointed (one write each; a
 * second one only before an unsafe tool call, recording its intent) so that
 * a redelivered run resumes after its last completed step.
 *
 * The run's state is a {@link RunState}; this module only sequences the
 * step modules over it: claim (below), `prepareRun`, `runStep` at each
 * boundary, `finishRun`.
 */

/** A claimed run, as the run consumer holds it. */
export interface Run {
  readonly taskId: string;
  /** How the consumer stops it: drain, hand-back, lost lease. */
  readonly signals: RunSignals;
  /** The task as the run sees it now (a prioritize changes its priority); undefined until it is loaded. */
  readonly task: TaskRecord | undefined;
  /** Runs until the run ends or must leave this executor; never throws. */
  execute(): Promise<RunExit>;
}

const RETRY_DELAY_MS = 5_000;

function isTransient(error: unknown): boolean {
  // A store that failed may work later; a write it refused as malformed is refused again.
  if (isStoreError(error)) return error.kind !== STORE_ERROR_KINDS.invalid;
  return isServiceError(error) && (error.code === 'unavailable' || error.code === 'timeout');
}

/** The ErrorCode of a run ended by `error`. */
function failureCode(error: unknown): string {
  if (error instanceof LlmCallRefused) return error.reason;
  if (error instanceof AgentConfigRefused) return RUN_ERROR_CODES.agentUnavailable;
  if (error instanceof ProviderFailure) return RUN_ERROR_CODES.llmError;
  return RUN_ERROR_CODES.internal;
}

/** `holdsLease` answers, before each of the run's writes and events, whether it may still act (see `LeaseManager.holds`). */
export function createRun(taskId: string, deps: RunDeps, deliveryCount: number, holdsLease?: () => boolean): Run {
  const log = deps.logger.child({ taskId, delivery: deliveryCount });
  let state: RunState | undefined;
  let untrack: (() => void) | undefined;
  const signals = new RunSignals(taskId, {
    ...(holdsLease === undefined ? {} : { holdsLease }),
    onLost: () => state?.events.silence(),
  });
  return {
    taskId,
    signals,
    get task() {
      return state?.task;
    },
    async execute(): Promise<RunExit> {
      try {
        const task = await deps.tasks.getTask(taskId);
        if (task === null) {
          log.warn('run message for an unknown task dropped');
          return { kind: 'done' };
        }
        // Fleet control (fleet-gate.ts): a paused or stopped agent's run goes back on the queue unclaimed.
        const held = await deps.fleet?.holdClaim(task);
        if (held !== undefined) return { kind: 'retry', delayMs: held };
        untrack = deps.fleet?.track(task);
        annotateRun(task, deps.settings.defaultAgentId);
        state = createRunState(task, deps, signals, log);
        const prepared = await claim(state);
        if (prepared === undefined) return await withoutSteps(state);
        await loop(state, prepared);
        return signals.exit();
      } catch (error) {
        return await fail(state, signals, log, error);
      } finally {
        if (state !== undefined) {
          closeControlInbox(state);
          clearTimeout(state.approvalTimer);
          clearTimeout(state.authTimer);
        }
        untrack?.();
        signals.dispose();
        await state?.costs.flush();
      }
    },
  };
}

async function fail(run: RunState | undefined, signals: RunSignals, log: Logger, error: unknown): Promise<RunExit> {
  if (signals.exitRequest !== undefined) return signals.exit();
  if (isTransient(error) || signals.terminated || run === undefined) {
    log.warn({ err: error }, 'run interrupted; it will be retried');
    return { kind: 'retry', delayMs: RETRY_DELAY_MS };
  }
  const code = failureCode(error);
  try {
    const cancel = signals.cancel;
    if (cancel !== undefined) {
      // The caller asked the run to stop: the step it waited for failing does not make the run a failure.
      log.warn({ err: error, errorCode: code }, 'the step a cancel waited for failed; the run ends cancelled');
      await finishRun(run, { status: 'cancelled', reason: cancel.reason, cascaded: cancel.cascaded });
      return signals.exit();
    }
    log[code === RUN_ERROR_CODES.internal ? 'error' : 'warn']({ err: error, errorCode: code }, 'run failed');
    if (code === RUN_ERROR_CODES.internal) {
      run.events.emit(
        'runtime.error',
        runtimeErrorPayload(error, run.checkpoint.step),
        runtimeErrorEventId(run.taskId),
      );
    }
    await finishRun(run, { status: 'failed', error_code: code });
    return signals.exit();
  } catch (again) {
    if (signals.exitRequest !== undefined) return signals.exit();
    log.warn({ err: again }, 'run could not be ended; it will be retried');
    return { kind: 'retry', delayMs: RETRY_DELAY_MS };
  }
}

/**
 * The claim ran no step: there was nothing to run, the run ended before
 * planning, or a wait before planning (a server's authorization) was
 * stopped: a cancellation ends the run now, a hand-back or lost lease leaves.
 */
async function withoutSteps(run: RunState): Promise<RunExit> {
  const { signals } = run;
  const cancel = signals.cancel;
  if (!signals.terminated && signals.exitRequest === undefined && cancel !== undefined) {
    await finishRun(run, { status: 'cancelled', reason: cancel.reason, cascaded: cancel.cascaded });
  }
  return signals.exit();
}

/**
 * Claims the task: marks it running, restores the last checkpoint, opens
 * the control inbox and prepares the steps. `undefined` when there is
 * nothing to run (ended already, or now): the run's message is done.
 */
async function claim(run: RunState): Promise<PreparedRun | undefined> {
  const { task, deps } = run;
  if (isTerminal(task.status)) {
    // Nothing of the run may run again here; a failure to reach the stream retries the re-publication.
    run.signals.markTerminated();
    await republishTerminal(task, deps.runStates, run.events, deps.storedEvents);
    return undefined;
  }
  const saved = await deps.runStates.load(run.taskId);
  if (saved?.terminal !== undefined) {
    // The previous executor saved how the run ends and died before marking the task: it ends that way.
    await finishRun(run, saved.terminal, saved.answer);
    return undefined;
  }
  const prior = await deps.tasks.markRunning(run.taskId);
  if (prior === null) return undefined;
  const firstStart = prior === 'pending';
  if (firstStart || !(await startedStored(run))) {
    run.events.emit('task.started', { TaskID: run.taskId, PriorState: 'pending' }, startedEventId(run.taskId));
  }
  task.status = 'running';
  run.context.push(...(task.context ?? []));
  if (saved !== null) restore(run, saved);
  const attempt = linkAttempts(saved?.attempt_trace);
  if (attempt !== undefined) run.checkpoint.attempt_trace = attempt;
  openControlInbox(run);
  if (!firstStart) await restorePauses(run);
  const pending = run.checkpoint.pending_call;
  if (pending !== null && pending !== undefined) {
    await outcomeUnknown(run, pending.tool, pending.transport);
    return undefined;
  }
  return prepareRun(run);
}

/** The checkpoint and the cancellation marker an earlier claim saved. */
function restore(run: RunState, saved: RunStateRecord): void {
  run.checkpoint = {
    step: saved.step ?? 0,
    messages: saved.messages ?? [],
    completed_calls: saved.completed_calls ?? [],
    pending_call: saved.pending_call ?? null,
    inputs_consumed: saved.inputs_consumed ?? 0,
    cost_usd: saved.cost_usd ?? 0,
    ...(saved.repairs === undefined ? {} : { repairs: saved.repairs }),
    ...(saved.live_overrides === undefined ? {} : { live_overrides: saved.live_overrides }),
  };
  if (saved.cancel !== undefined) run.signals.restoreCancel({ ...saved.cancel, hard: false });
}

/**
 * Whether the stream holds the run's `task.started`: a redelivered run's
 * executor may have died between marking the task running and storing it,
 * however long ago (a checkpoint is written beside the flush of the events
 * before it, not after). Read only on a redelivery.
 */
async function startedStored(run: RunState): Promise<boolean> {
  const stored = await run.deps.storedEvents(run.events.identity, run.task.spawned_sequence ?? 0);
  return stored.has(startedEventId(run.taskId));
}

async function restorePauses(run: RunState): Promise<void> {
  for (const record of await run.deps.runStates.openPauses(run.taskId)) {
    run.pausesOpened = true;
    if (record.kind === 'pause') run.pause ??= record;
    else if (record.kind === 'auth') run.authPauses.set(record.token, record);
    else run.restoredApproval ??= record;
  }
}

/** An unsafe call was under way when the previous executor stopped: never retried blindly. */
async function outcomeUnknown(run: RunState, tool: string, transport: string | undefined): Promise<void> {
  run.events.emit('tool.failed', {
    Identity: run.events.quad,
    ToolName: tool,
    Transport: transport ?? run.deps.tools.get(tool)?.transport ?? 'builtin',
    Attempts: 1,
    ErrorClass: 'outcome_unknown',
    ErrorMessage: 'the executor stopped during this unsafe call; its outcome is unknown',
  });
  await finishRun(run, { status: 'failed', error_code: RUN_ERROR_CODES.toolOutcomeUnknown });
}

async function loop(run: RunState, prepared: PreparedRun): Promise<void> {
  const { maxSteps } = run.deps.settings;
  while (await boundary(run)) {
    if (stepLimitReached(run.checkpoint.step, maxSteps)) {
      run.events.emit('planner.max_steps_exceeded', {
        Identity: run.events.quad,
        MaxSteps: maxSteps,
        StepsObserved: run.checkpoint.step,
        LastTool: lastToolOf(run.checkpoint.messages),
        OccurredAt: occurredAt(),
      });
      await finishRun(run, { status: 'failed', error_code: RUN_ERROR_CODES.maxStepsExceeded });
      return;
    }
    await runStep(run, prepared);
  }
}

/** A planner-step boundary: stop, cancel, or park while a pause is pending. */
async function boundary(run: RunState): Promise<boolean> {
  const { signals } = run;
  for (;;) {
    if (signals.exitRequest !== undefined || signals.terminated) return false;
    const cancel = signals.cancel;
    if (cancel !== undefined) {
      await finishRun(run, { status: 'cancelled', reason: cancel.reason, cascaded: cancel.cascaded });
      return false;
    }
    if (run.pause === undefined) return true;
    if (signals.draining) {
      signals.requestHandback();
      return false;
    }
    await signals.park();
  }
}
