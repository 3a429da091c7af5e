import { randomUUID } from 'node:crypto';
import type { Bus, EventPublisher } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { PauseRecord } from '../domain/pause.ts';
import type { ContextEntry, TaskRecord } from '../domain/task.ts';
import type { RunOverridesRepository } from '../store/run-overrides.repository.ts';
import { RUN_STATE_DEFAULTS } from '../store/run-state.repository.ts';
import type { Checkpoint, Owner, RunStateRepository } from '../store/run-state.repository.ts';
import type { TaskConfigRepository } from '../store/task-config.repository.ts';
import type { TaskGroupRepository } from '../store/task-group.repository.ts';
import type { TaskRepository } from '../store/task.repository.ts';
import type { ArtifactIo } from '../tools/artifact-io.ts';
import type { McpToolHost } from '../tools/mcp-tools.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { AgentConfigResolver } from './agent-config.ts';
import type { CompletionHook } from './completion-hook.ts';
import type { EngineSettings } from './engine-config.ts';
import type { EventPipeline } from './event-pipeline.ts';
import type { Governance } from './governance.ts';
import type { InferenceCredentials } from './inference-credentials.ts';
import type { MemoryPrompt } from './memory.ts';
import type { FleetGate } from './fleet-gate.ts';
import type { OutputModeMemory } from './output-mode-memory.ts';
import { RunCosts } from './run-costs.ts';
import { RunEvents } from './run-events.ts';
import type { RunSignals } from './run-signals.ts';
import type { StoredEventIds } from './stored-events.ts';
import type { ToolCallReporter } from './tool-call-reporter.ts';

/**
 * The state of one claimed run on this executor, in one place: what the
 * step modules (`run-prepare`, `run-step`, `approval`, `controls`,
 * `run-finish`) read and write. Each of them is a function of a
 * {@link RunState} (its deps included); none reaches into another's
 * state. How the run is stopped is its {@link RunSignals}.
 */

/** What the engine gives each run. */
export interface RunDeps {
  readonly bus: Bus;
  readonly pipeline: EventPipeline;
  /** Publishes one event and waits for its acknowledgement (a claim's `task.spawned`, `announce.ts`). */
  readonly publisher: EventPublisher;
  /** Which of a run's events the stream holds, asked after an outage (`stored-events.ts`). */
  readonly storedEvents: StoredEventIds;
  readonly logger: Logger;
  readonly tasks: TaskRepository;
  readonly runStates: RunStateRepository;
  /** Task groups: a member's run end records its outcome in its group. */
  readonly groups: TaskGroupRepository;
  /** The executor's tools (built-ins); a run adds its agent's MCP tools (`run-tools.ts`). */
  readonly tools: ToolRegistry;
  /** The agent's MCP tools, hosted by agent-registry. */
  readonly mcp: McpToolHost;
  /** Every tool call's outcome, on its way to agent-registry. */
  readonly toolCalls: ToolCallReporter;
  readonly agents: AgentConfigResolver;
  readonly runOverrides: RunOverridesRepository;
  readonly taskConfigs: TaskConfigRepository;
  readonly governance: Governance;
  /** LLM keys from inference brokers (agents whose provider names one). */
  readonly credentials: InferenceCredentials;
  readonly memory: MemoryPrompt;
  readonly artifacts: ArtifactIo;
  readonly settings: EngineSettings;
  /** Output-mode downgrades remembered across the executor's runs (absent: none are). */
  readonly outputModes?: OutputModeMemory;
  /** Fleet control of the runs' agents (absent: no fleet enforcement). */
  readonly fleet?: FleetGate;
}

/** How an approval wait ended. */
export type Verdict = 'approve' | 'reject' | 'timeout_reject' | 'stop';

/** The approval the run waits for now, and how that wait is ended. */
export interface PendingApproval {
  readonly record: PauseRecord;
  readonly settle: (verdict: Verdict) => void;
}

/**
 * How a wait for the user to authorize an MCP server ended: the flow
 * completed (or the grant turned up), a resume/approve asked to look again,
 * the user (or a reject control) denied it, the flow expired, or a
 * cancellation, drain or lost lease stopped the wait.
 */
export type AuthVerdict = 'authorized' | 'resumed' | 'denied' | 'expired' | 'stop';

/** The authorization the run waits for now, and how that wait is ended. */
export interface PendingAuth {
  readonly record: PauseRecord;
  readonly settle: (verdict: AuthVerdict) => void;
}

/** The control inbox a live run listens on (`serveControlInbox`). */
export interface RunInbox {
  close(): void;
}

export interface RunState {
  readonly taskId: string;
  /** This claim of the run (a redelivery or a re-enqueued run is another): part of each LLM call's id. */
  readonly claim: string;
  readonly deps: RunDeps;
  readonly log: Logger;
  readonly signals: RunSignals;
  /** The task row as claimed; `status`, `goal` and `priority` follow the run's own changes. */
  readonly task: TaskRecord;
  readonly owner: Owner;
  readonly events: RunEvents;
  /** Its LLM calls' costs on their way to governance. */
  readonly costs: RunCosts;
  /** Injected context and user messages, oldest first (the task's `context`). */
  readonly context: ContextEntry[];
  /** What each step checkpoints: the step number, the messages, the tool calls, the inputs consumed, the cost. */
  checkpoint: Checkpoint;
  /** A requested live pause, unresolved. */
  pause: PauseRecord | undefined;
  /** The approval the run waits for now. */
  approval: PendingApproval | undefined;
  /** Ends the approval wait when its policy's timeout passes. */
  approvalTimer: NodeJS.Timeout | undefined;
  /** An approval still open from an earlier executor of the run, reused by the same call. */
  restoredApproval: PauseRecord | undefined;
  /** The authorization of an MCP server the run waits for now (`auth-wait.ts`). */
  auth: PendingAuth | undefined;
  /** Ends the authorization wait when its flow expires. */
  authTimer: NodeJS.Timeout | undefined;
  /** The run's open `auth` pauses by token: restored from an earlier executor, or opened on this one. */
  readonly authPauses: Map<string, PauseRecord>;
  /** Verdicts on `auth` pauses that came before their wait was set up (a completion racing `_oauth.begin`). */
  readonly authVerdicts: Map<string, AuthVerdict>;
  /** Pause tokens of this run resolved on this executor (a second approve of one is refused). */
  readonly resolvedTokens: Set<string>;
  /** True once the run had a pause record: its open ones are resolved when it ends. */
  pausesOpened: boolean;
  inbox: RunInbox | undefined;
  /** The control chain: controls are applied one at a time, in arrival order. */
  controls: Promise<void>;
  /** Controls the inbox accepted whose application has not begun (what a hard cancel drops: runtime.run_cancelled). */
  controlsQueued: number;
  /** The agent's completion hook, set when the run is prepared; run once its terminal event is out. */
  completionHook: CompletionHook | undefined;
}

/** Creates the state of a claimed `task` (no checkpoint restored yet). */
export function createRunState(task: TaskRecord, deps: RunDeps, signals: RunSignals, log: Logger): RunState {
  const owner: Owner = { tenant: task.tenant, user: task.user, session: task.session };
  const events = new RunEvents({
    pipeline: deps.pipeline,
    identity: { ...owner, run: task.task_id },
    logger: log,
    storedIds: deps.storedEvents,
    fromSequence: task.spawned_sequence ?? 0,
    holdsRun: () => signals.leaseHeld(),
    meta: { agentId: task.agent_id ?? deps.settings.defaultAgentId, acceptedAtMs: Date.parse(task.created_at) },
  });
  return {
    taskId: task.task_id,
    // 32 random bits, from Node's buffered UUIDs (a `randomBytes` call asks the system each time).
    claim: randomUUID().slice(0, 8),
    deps,
    log,
    signals,
    task,
    owner,
    events,
    costs: new RunCosts((records) => deps.governance.recordCosts(events.quad, records), log),
    context: [],
    checkpoint: { ...RUN_STATE_DEFAULTS, messages: [], completed_calls: [] },
    pause: undefined,
    approval: undefined,
    approvalTimer: undefined,
    restoredApproval: undefined,
    auth: undefined,
    authTimer: undefined,
    authPauses: new Map<string, PauseRecord>(),
    authVerdicts: new Map<string, AuthVerdict>(),
    resolvedTokens: new Set<string>(),
    pausesOpened: false,
    inbox: undefined,
    controls: Promise.resolve(),
    controlsQueued: 0,
    completionHook: undefined,
  };
}
