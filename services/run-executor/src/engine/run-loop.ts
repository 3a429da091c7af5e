import { randomBytes } from 'node:crypto';
import { isServiceError } from '@ars/contracts';
import type { Bus, Subscription } from '@ars/bus';
import { isStoreError, STORE_ERROR_KINDS } from '@ars/store';
import type { Logger } from '@ars/telemetry';
import type { PauseRecord } from '../domain/pause.ts';
import { isTerminal } from '../domain/task.ts';
import type { ContextEntry, TaskRecord } from '../domain/task.ts';
import type { ChatMessage } from '../providers/provider.ts';
import type { RunOverridesRepository } from '../store/run-overrides.repository.ts';
import { RUN_STATE_DEFAULTS } from '../store/run-state.repository.ts';
import type { Checkpoint, Owner, RunStateRepository, TerminalOutcome } from '../store/run-state.repository.ts';
import type { TaskConfigRepository } from '../store/task-config.repository.ts';
import type { TaskRepository } from '../store/task.repository.ts';
import type { ArtifactIo } from '../tools/artifact-io.ts';
import type { ToolRegistry, ToolSpec } from '../tools/registry.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { AgentConfigRefused } from './agent-config.ts';
import type { AgentConfigResolver, AgentRunConfig, EffectiveConfigRecord } from './agent-config.ts';
import { openControlInbox } from './controls.ts';
import type { EngineSettings } from './engine-config.ts';
import type { EventPipeline } from './event-pipeline.ts';
import { LlmCallRefused } from './governance.ts';
import type { Governance } from './governance.ts';
import { ProviderFailure } from './llm-call.ts';
import type { GovernedCallContext, RunLlm } from './llm-call.ts';
import type { MemoryPrompt } from './memory.ts';
import { lastToolOf, RUN_ERROR_CODES, stepLimitReached } from './planner.ts';
import { occurredAt, RunEvents } from './run-events.ts';
import { finishRun, republishTerminal, startedEventId } from './run-finish.ts';
import type { StoredEventIds } from './stored-events.ts';
import { RunCosts } from './run-costs.ts';
import { prepareRun } from './run-prepare.ts';
import { runStep } from './run-step.ts';

/**
 * One run on this executor: claim, planner steps, controls' effects, and
 * exactly one terminal event. Steps are checkpointed (one write each; a
 * second one only before an unsafe tool call, recording its intent) so that
 * a redelivered run resumes after its last completed step.
 */

/** What the engine gives each run. */
export interface RunDeps {
  readonly bus: Bus;
  readonly pipeline: EventPipeline;
  /** Which of a run's events the stream holds, asked after an outage (`stored-events.ts`). */
  readonly storedEvents: StoredEventIds;
  readonly logger: Logger;
  readonly tasks: TaskRepository;
  readonly runStates: RunStateRepository;
  readonly tools: ToolRegistry;
  readonly agents: AgentConfigResolver;
  readonly runOverrides: RunOverridesRepository;
  readonly taskConfigs: TaskConfigRepository;
  readonly governance: Governance;
  readonly memory: MemoryPrompt;
  readonly artifacts: ArtifactIo;
  readonly settings: EngineSettings;
}

/** What the holder of the run's RUNS message does when the run returns. */
export type RunExit =
  | { readonly kind: 'done' }
  | { readonly kind: 'handback' }
  | { readonly kind: 'lost' }
  | { readonly kind: 'retry'; readonly delayMs: number };

/** How an approval wait ended. */
export type Verdict = 'approve' | 'reject' | 'timeout_reject' | 'stop';

/** A pending cancellation. */
export interface CancelRequest {
  readonly reason: string;
  readonly cascaded: boolean;
  hard: boolean;
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

/** Thrown by {@link RunLoop.assertLease}: the run is no longer this executor's to write. */
export class RunLeaseLost extends Error {
  constructor(taskId: string) {
    super(`the lease of run ${taskId} is no longer held here`);
    this.name = 'RunLeaseLost';
  }
}

export class RunLoop {
  readonly taskId: string;
  readonly deps: RunDeps;
  readonly log: Logger;
  readonly deliveryCount: number;
  /** This claim of the run (a redelivery or a re-enqueued run is another): part of each LLM call's id. */
  readonly claim = randomBytes(4).toString('hex');
  /** Aborts the run's LLM calls and its read-only and idempotent tool calls: a hard cancel, a hand-back, a lost lease. */
  readonly abort = new AbortController();
  /** Aborts an unsafe tool call: a hard cancel and a lost lease at once, a hand-back only when its allowance ends. */
  readonly #unsafeAbort = new AbortController();
  #unsafeCalls = 0;
  #unsafeTimer: NodeJS.Timeout | undefined;
  task!: TaskRecord;
  owner!: Owner;
  events!: RunEvents;
  /** Injected context and user messages, oldest first (the task's `context`). */
  context: ContextEntry[] = [];
  state: Checkpoint = { ...RUN_STATE_DEFAULTS, messages: [], completed_calls: [] };
  cancel: CancelRequest | undefined;
  /** A requested live pause, unresolved. */
  pause: PauseRecord | undefined;
  /** The approval the run waits for now. */
  approval: { readonly record: PauseRecord; readonly settle: (verdict: Verdict) => void } | undefined;
  exitRequest: 'handback' | 'lost' | undefined;
  terminated = false;
  parked = false;
  draining = false;
  inbox: Subscription | undefined;
  controls: Promise<void> = Promise.resolve();
  /** Pause tokens of this run resolved on this executor (a second approve of one is refused). */
  readonly resolvedTokens = new Set<string>();
  /** True once the run had a pause record: its open ones are resolved when it ends. */
  pausesOpened = false;
  /** An approval still open from an earlier executor of the run, reused by the same call. */
  restoredApproval: PauseRecord | undefined;
  approvalTimer: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  /** Waits inside a step (a rate-limit wait) that a cancellation or drain ends early. */
  readonly #stepWaits = new Set<() => void>();
  effective!: EffectiveConfigRecord;
  agent!: AgentRunConfig;
  /** The provider the run calls now (a failover replaces it for the rest of the run). */
  llm!: RunLlm;
  call!: GovernedCallContext;
  exposed = new Map<string, ToolDefinition>();
  specs: ToolSpec[] = [];
  history: ChatMessage[] = [];
  /** The prompt's caller-memory section (`''` when none); refreshed after the run's own memory write. */
  memoryText = '';
  memoryStale = false;
  /** The prompt's input-artifacts section (`''` when none). */
  artifactsText = '';
  /** Its LLM calls' costs on their way to governance. */
  readonly costs: RunCosts;

  /** Whether this executor may still act for the run (its lease; see `LeaseManager.holds`). */
  readonly #holdsLease: () => boolean;

  constructor(taskId: string, deps: RunDeps, deliveryCount: number, holdsLease: () => boolean = () => true) {
    this.taskId = taskId;
    this.deps = deps;
    this.deliveryCount = deliveryCount;
    this.#holdsLease = holdsLease;
    this.log = deps.logger.child({ taskId, delivery: deliveryCount });
    this.costs = new RunCosts((record) => deps.governance.recordCost(this.events.quad, record), this.log);
  }

  /** Runs until the run ends or must leave this executor; never throws. */
  async execute(): Promise<RunExit> {
    try {
      const early = await this.#setup();
      if (early !== undefined) return early;
      await this.#loop();
      return this.#exit();
    } catch (error) {
      return await this.#fail(error);
    } finally {
      this.closeInbox();
      clearTimeout(this.approvalTimer);
      clearTimeout(this.#unsafeTimer);
      await this.costs.flush();
    }
  }

  /**
   * Drain: stop and leave the run to another executor (its last checkpoint
   * stands). LLM calls and read-only or idempotent tool calls are aborted at
   * once (the next executor redoes them); an unsafe call in flight is not:
   * it may run `unsafeCallMs` longer, its outcome is checkpointed as usual
   * and the run stops at the step boundary after it, so the next executor
   * does not fail the run `tool_outcome_unknown`. A call still running then
   * is aborted, and its outcome is unknown.
   */
  requestHandback(unsafeCallMs = 0): void {
    this.exitRequest ??= 'handback';
    this.#interrupt();
    if (this.#unsafeCalls === 0 || unsafeCallMs <= 0) this.#unsafeAbort.abort();
    else if (this.#unsafeTimer === undefined) {
      this.#unsafeTimer = setTimeout(() => this.#unsafeAbort.abort(), unsafeCallMs);
      this.#unsafeTimer.unref();
    }
  }

  /** True while an unsafe tool call (from its recorded intent to its checkpointed outcome) is under way and not aborted. */
  get unsafeCallInFlight(): boolean {
    return this.#unsafeCalls > 0 && !this.#unsafeAbort.signal.aborted;
  }

  /**
   * Runs an unsafe tool call, from recording its intent to checkpointing its
   * outcome, under the signal that a hand-back does not abort (see
   * {@link requestHandback}). None starts once the run is interrupted (the
   * step is replayed by the run's next executor, or the run is cancelled).
   */
  async unsafeCall(call: (signal: AbortSignal) => Promise<void>): Promise<void> {
    if (this.interrupted) return;
    this.#unsafeCalls++;
    try {
      await call(this.#unsafeAbort.signal);
    } finally {
      this.#unsafeCalls--;
    }
  }

  /** Drain: finish if possible, but hand the run back instead of parking (now or later). */
  requestDrain(): void {
    this.draining = true;
    if (this.waiting) this.requestHandback();
  }

  /** Another executor holds the lease now: stop without a word. */
  markLost(): void {
    this.exitRequest = 'lost';
    this.events?.silence();
    this.#interrupt();
    this.#unsafeAbort.abort();
  }

  /**
   * Before each of the run's store writes: throws (and the run stops without
   * a word, as {@link markLost}) once this executor may no longer act for it.
   * Its events are checked the same way as they are emitted.
   */
  assertLease(): void {
    if (this.exitRequest === 'lost' || !this.#holdsLease()) {
      this.markLost();
      throw new RunLeaseLost(this.taskId);
    }
  }

  /**
   * Whether this executor may still say something of the run (a control's
   * narration, an event): false, and the run stops without a word (as
   * {@link markLost}), once its lease is lost or stale. A run this executor
   * ended, or handed back, let its lease go itself: a control that reaches
   * its closing inbox late is still narrated (rejected `run_ended` or
   * `executor_draining`), as every accepted control is.
   */
  leaseHeld(): boolean {
    if (this.exitRequest === 'lost') return false;
    if (this.terminated || this.exitRequest === 'handback' || this.#holdsLease()) return true;
    this.markLost();
    return false;
  }

  /** True while the run waits for a human (pause or approval). */
  get waiting(): boolean {
    return this.parked || this.approval !== undefined;
  }

  /** Wakes a parked run so it re-reads its flags. */
  wake(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Cancel (from a control or a cascading parent). Hard aborts in-flight calls at once. */
  requestCancel(request: CancelRequest): void {
    this.cancel = request;
    if (request.hard) {
      this.events.seal();
      this.abort.abort();
      this.#unsafeAbort.abort();
    }
    this.approval?.settle('stop');
    this.#endStepWaits();
    this.wake();
  }

  /**
   * Sleeps `ms` inside a step; resolves false at once when the run is
   * cancelled (soft or hard), drained or lost meanwhile, true otherwise.
   */
  pauseStep(ms: number): Promise<boolean> {
    if (this.interrupted || this.cancel !== undefined) return Promise.resolve(false);
    return new Promise((resolve) => {
      const end = (slept: boolean): void => {
        clearTimeout(timer);
        this.#stepWaits.delete(stop);
        resolve(slept);
      };
      const stop = (): void => end(false);
      const timer = setTimeout(() => end(true), ms);
      this.#stepWaits.add(stop);
    });
  }

  #endStepWaits(): void {
    for (const stop of [...this.#stepWaits]) stop();
  }

  /**
   * Closes the control inbox by draining it, not unsubscribing: a control
   * nats-server routed here before it saw the unsubscribe still reaches the
   * callback and gets its answer (the run, ended or leaving, rejects it on
   * the stream). Unsubscribing dropped such a control on the client side, so
   * its sender waited out the reply timeout instead of hearing `accepted` or,
   * a moment later, `not_found`; a cancel racing a run's end (an erasure's
   * cascade does that) failed with `timeout`.
   */
  closeInbox(): void {
    const inbox = this.inbox;
    this.inbox = undefined;
    inbox?.drain().catch(() => inbox.unsubscribe());
  }

  #interrupt(): void {
    this.abort.abort();
    this.approval?.settle('stop');
    this.#endStepWaits();
    this.wake();
  }

  #exit(): RunExit {
    if (this.exitRequest === 'lost') return { kind: 'lost' };
    if (this.exitRequest === 'handback' && !this.terminated) return { kind: 'handback' };
    return { kind: 'done' };
  }

  async #fail(error: unknown): Promise<RunExit> {
    if (this.exitRequest !== undefined) return this.#exit();
    if (isTransient(error) || this.terminated || this.task === undefined) {
      this.log.warn({ err: error }, 'run interrupted; it will be retried');
      return { kind: 'retry', delayMs: RETRY_DELAY_MS };
    }
    const code = failureCode(error);
    try {
      if (this.cancel !== undefined) {
        // The caller asked the run to stop: the step it waited for failing does not make the run a failure.
        this.log.warn({ err: error, errorCode: code }, 'the step a cancel waited for failed; the run ends cancelled');
        await this.terminate({ status: 'cancelled', reason: this.cancel.reason, cascaded: this.cancel.cascaded });
        return this.#exit();
      }
      this.log[code === RUN_ERROR_CODES.internal ? 'error' : 'warn']({ err: error, errorCode: code }, 'run failed');
      await this.terminate({ status: 'failed', error_code: code });
      return this.#exit();
    } catch (again) {
      if (this.exitRequest !== undefined) return this.#exit();
      this.log.warn({ err: again }, 'run could not be ended; it will be retried');
      return { kind: 'retry', delayMs: RETRY_DELAY_MS };
    }
  }

  /** Claims the task; returns an exit when there is nothing to run. */
  async #setup(): Promise<RunExit | undefined> {
    const { tasks, runStates } = this.deps;
    const task = await tasks.getTask(this.taskId);
    if (task === null) {
      this.log.warn('run message for an unknown task dropped');
      return { kind: 'done' };
    }
    this.task = task;
    this.owner = { tenant: task.tenant, user: task.user, session: task.session };
    this.events = new RunEvents({
      pipeline: this.deps.pipeline,
      identity: { ...this.owner, run: task.task_id },
      logger: this.log,
      storedIds: this.deps.storedEvents,
      fromSequence: task.spawned_sequence ?? 0,
      holdsRun: () => this.leaseHeld(),
    });
    if (isTerminal(task.status)) {
      // Nothing of the run may run again here; a failure to reach the stream retries the re-publication.
      this.terminated = true;
      await republishTerminal(task, runStates, this.events, this.deps.storedEvents);
      return { kind: 'done' };
    }
    const saved = await runStates.load(this.taskId);
    if (saved?.terminal !== undefined) {
      // The previous executor saved how the run ends and died before marking the task: it ends that way.
      await this.terminate(saved.terminal, saved.answer);
      return { kind: 'done' };
    }
    const prior = await tasks.markRunning(this.taskId);
    if (prior === null) return { kind: 'done' };
    const firstStart = prior === 'pending';
    if (firstStart || !(await this.#startedStored(task))) {
      this.events.emit('task.started', { TaskID: this.taskId, PriorState: 'pending' }, startedEventId(this.taskId));
    }
    task.status = 'running';
    this.context = [...(task.context ?? [])];
    if (saved !== null) {
      this.state = {
        step: saved.step ?? 0,
        messages: saved.messages ?? [],
        completed_calls: saved.completed_calls ?? [],
        pending_call: saved.pending_call ?? null,
        inputs_consumed: saved.inputs_consumed ?? 0,
        cost_usd: saved.cost_usd ?? 0,
      };
      if (saved.cancel !== undefined) this.cancel = { ...saved.cancel, hard: false };
    }
    openControlInbox(this);
    if (!firstStart) await this.#restorePauses();
    if (this.state.pending_call !== null && this.state.pending_call !== undefined) {
      await this.#outcomeUnknown(this.state.pending_call.tool);
      return { kind: 'done' };
    }
    await prepareRun(this);
    return undefined;
  }

  /**
   * Whether the stream holds the run's `task.started`: a redelivered run's
   * executor may have died between marking the task running and storing it,
   * however long ago (a checkpoint is written beside the flush of the events
   * before it, not after). Read only on a redelivery.
   */
  async #startedStored(task: TaskRecord): Promise<boolean> {
    const stored = await this.deps.storedEvents(this.events.identity, task.spawned_sequence ?? 0);
    return stored.has(startedEventId(this.taskId));
  }

  async #restorePauses(): Promise<void> {
    for (const record of await this.deps.runStates.openPauses(this.taskId)) {
      this.pausesOpened = true;
      if (record.kind === 'pause') this.pause ??= record;
      else this.restoredApproval ??= record;
    }
  }

  /** An unsafe call was under way when the previous executor stopped: never retried blindly. */
  async #outcomeUnknown(tool: string): Promise<void> {
    this.events.emit('tool.failed', {
      Identity: this.events.quad,
      ToolName: tool,
      Transport: this.deps.tools.get(tool)?.transport ?? 'builtin',
      Attempts: 1,
      ErrorClass: 'outcome_unknown',
      ErrorMessage: 'the executor stopped during this unsafe call; its outcome is unknown',
    });
    await this.terminate({ status: 'failed', error_code: RUN_ERROR_CODES.toolOutcomeUnknown });
  }

  async #loop(): Promise<void> {
    const { maxSteps } = this.deps.settings;
    while (await this.#boundary()) {
      if (stepLimitReached(this.state.step, maxSteps)) {
        this.events.emit('planner.max_steps_exceeded', {
          Identity: this.events.quad,
          MaxSteps: maxSteps,
          StepsObserved: this.state.step,
          LastTool: lastToolOf(this.state.messages),
          OccurredAt: occurredAt(),
        });
        await this.terminate({ status: 'failed', error_code: RUN_ERROR_CODES.maxStepsExceeded });
        return;
      }
      await runStep(this);
    }
  }

  /** A planner-step boundary: stop, cancel, or park while a pause is pending. */
  async #boundary(): Promise<boolean> {
    for (;;) {
      if (this.exitRequest !== undefined || this.terminated) return false;
      if (this.cancel !== undefined) {
        await this.terminate({ status: 'cancelled', reason: this.cancel.reason, cascaded: this.cancel.cascaded });
        return false;
      }
      if (this.pause === undefined) return true;
      if (this.draining) {
        this.requestHandback();
        return false;
      }
      this.parked = true;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.parked = false;
    }
  }

  /** True once a hard cancel, a drain or a lost lease interrupted in-flight calls. */
  get interrupted(): boolean {
    return this.exitRequest !== undefined || this.cancel?.hard === true || this.abort.signal.aborted;
  }

  /** Ends the run with exactly one terminal event (see `finishRun`). */
  terminate(outcome: TerminalOutcome, answer?: string): Promise<void> {
    return finishRun(this, outcome, answer);
  }
}
