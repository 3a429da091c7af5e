import type { ChatMessage } from '../providers/provider.ts';
import { providerFor, providerName } from '../providers/select.ts';
import { recordedConfigOf } from '../store/task-config.repository.ts';
import type { ToolSpec } from '../tools/registry.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { toAgentRunConfig } from './agent-config.ts';
import type { AgentRunConfig, EffectiveConfigRecord } from './agent-config.ts';
import { dispositionEventId, dispositionPayload, planInputArtifacts } from './dispositions.ts';
import type { GovernedCallContext, RunLlm } from './llm-call.ts';
import { mediaSupport, runMedia } from './multimodal-run.ts';
import type { RunMedia } from './multimodal-inputs.ts';
import { historyMessages } from './planner.ts';
import { occurredAt } from './run-events.ts';
import { ownerIdentity } from './run-finish.ts';
import { acknowledgeBackgroundTurns } from './background-ack.ts';
import { applyRunOverrides } from './run-overrides.ts';
import type { RunState } from './run-state.ts';
import { exposedTools, runToolRegistry } from './run-tools.ts';

/** What a claimed run's steps share once {@link prepareRun} fetched it. */
export interface PreparedRun {
  readonly effective: EffectiveConfigRecord;
  /** Its `system` follows mid-run patches (`run-patches.ts`). */
  agent: AgentRunConfig;
  /** What each governed LLM call needs; its provider is replaced by a failover for the rest of the run. */
  readonly call: GovernedCallContext;
  /** The agent's tools (built-in and MCP), by name. */
  readonly exposed: ReadonlyMap<string, ToolDefinition>;
  readonly specs: readonly ToolSpec[];
  /** The session's earlier turns. */
  readonly history: readonly ChatMessage[];
  /** The prompt's caller-memory section (`''` when none); refreshed after the run's own memory write. */
  memoryText: string;
  memoryStale: boolean;
  /** The prompt's input-artifacts section (`''` when none). */
  readonly artifactsText: string;
}

/**
 * What a claimed run's steps share, fetched in parallel where independent:
 *
 * 1. the effective configuration — resolved at the first claim
 *    (agent-registry `_agent.effective_config`, then the session's run
 *    overrides) and recorded on the task; a redelivered run loads the
 *    recorded one — with the session's turns and the caller's memory;
 * 2. then the run's tools (with the agent's MCP tools from agent-registry's
 *    catalogue when it has MCP connections: `run-tools.ts`, waiting for the
 *    user to authorize OAuth-bound servers) and the provider's key
 *    (governance; none for a provider whose key comes from its inference
 *    broker at each call); undefined when the run ended or must stop while
 *    it waited;
 * 3. then the input artifacts' dispositions (and inline contents; images
 *    for a model that takes them: `multimodal-run.ts`), and the record of a
 *    fresh configuration.
 *
 * The dispositions are published once, before the first planner step
 * (fixed event ids: a redelivery before the first checkpoint publishes them
 * again and the stream drops the copies).
 */
export async function prepareRun(run: RunState): Promise<PreparedRun | undefined> {
  const { runStates, memory, settings } = run.deps;
  const quad = run.events.quad;
  const [{ effective, fresh }, turns, memoryText] = await Promise.all([
    effectiveConfig(run),
    runStates.sessionTurns(run.owner),
    memory.blocks(quad),
  ]);
  const agent = toAgentRunConfig(effective);
  await acknowledgeBackgroundTurns(run, turns);
  const key = providerKey(run, agent);
  // Settled even when the tools are never had (the run ended or stopped while a server waited for authorization).
  key.catch(() => undefined);
  const tools = await runToolRegistry(run, agent);
  if (tools === undefined) return undefined;
  if (agent.completionHook !== undefined) {
    run.completionHook = { name: agent.completionHook, tool: tools.get(agent.completionHook) };
  }
  const apiKey = await key;
  const exposed = exposedTools(tools, agent);
  const [artifacts] = await Promise.all([
    planInputArtifacts(
      run.task.input_artifacts ?? [],
      {
        agentDefault: agent.defaultDisposition,
        exposedTools: new Set(exposed.keys()),
        inlineMaxBytes: settings.inlineArtifactMaxBytes,
        media: mediaSupport(agent),
      },
      run.deps.artifacts,
      run.owner,
    ),
    fresh ? run.deps.taskConfigs.record(run.taskId, run.owner, effective) : undefined,
  ]);
  if (run.checkpoint.step === 0) {
    const at = occurredAt();
    for (const d of artifacts.resolved) {
      const eventId = dispositionEventId(run.taskId, d.artifact_id);
      run.events.emit('task.input_disposition.resolved', dispositionPayload(quad, d, at), eventId);
    }
  }
  const providerSettings = apiKey === undefined ? agent.provider : { ...agent.provider, apiKey };
  const llm: RunLlm = {
    provider: providerFor(providerSettings, { apiKey: settings.llmApiKey, timeoutMs: settings.llmTimeoutMs }),
    settings: providerSettings,
    params: agent.params,
  };
  return {
    effective,
    agent,
    call: callContext(run, agent, llm, runMedia(run, artifacts.images)),
    exposed,
    specs: tools.specs([...exposed.values()]),
    history: historyMessages(turns, run.taskId),
    memoryText,
    memoryStale: false,
    artifactsText: artifacts.prompt,
  };
}

/** Asks for the caller's memory again (after the run wrote some). */
export async function refreshMemory(run: RunState, prepared: PreparedRun): Promise<void> {
  prepared.memoryStale = false;
  prepared.memoryText = await run.deps.memory.blocks(run.events.quad);
}

/** The configuration recorded at the run's first claim, else a fresh resolution (`fresh`: to be recorded). */
async function effectiveConfig(run: RunState): Promise<{ effective: EffectiveConfigRecord; fresh: boolean }> {
  const recorded = recordedConfigOf(run.task);
  if (recorded !== undefined) {
    const loaded = await run.deps.taskConfigs.load(run.owner, recorded);
    if (loaded !== null) return { effective: loaded, fresh: false };
    run.log.warn({ contentHash: recorded.content_hash }, 'recorded run configuration not found; resolving again');
  }
  return { effective: await resolveConfig(run), fresh: recorded === undefined };
}

/** The effective configuration from agent-registry, with the session's run overrides applied. */
async function resolveConfig(run: RunState): Promise<EffectiveConfigRecord> {
  const { agents, runOverrides, settings } = run.deps;
  const [resolved, overrides] = await Promise.all([
    agents.resolve(ownerIdentity(run.task), run.task.agent_id ?? settings.defaultAgentId),
    runOverrides.get(run.owner),
  ]);
  return applyRunOverrides(resolved, overrides.overrides);
}

/**
 * An openai provider's key: the tenant's, installed in governance under the
 * provider's name; none when its inference broker gives one at each call.
 */
async function providerKey(run: RunState, agent: AgentRunConfig): Promise<string | undefined> {
  const { provider } = agent;
  if (provider.kind !== 'openai' || provider.apiKey !== undefined || provider.inferenceBroker !== undefined) {
    return undefined;
  }
  return run.deps.governance.providerKey(run.events.quad, providerName(agent.provider));
}

function callContext(
  run: RunState,
  agent: AgentRunConfig,
  llm: RunLlm,
  media: RunMedia | undefined,
): GovernedCallContext {
  const asker = {
    owner: run.owner,
    taskId: run.taskId,
    agentId: agent.agentId,
    emit: (type: string, payload: Record<string, unknown>) => run.events.emit(type, payload),
  };
  return {
    taskId: run.taskId,
    claim: run.claim,
    quad: run.events.quad,
    llm,
    governance: run.deps.governance,
    settings: run.deps.settings,
    script: agent.provider.script,
    interrupted: () => run.signals.interrupted,
    pauseStep: (ms) => run.signals.sleep(ms),
    settleCost: () => run.costs.pending,
    deferCost: (record) => run.costs.defer(record),
    holdCost: (record) => run.costs.hold(record),
    takeHeldCost: () => run.costs.take(),
    brokerKey: (settings) => run.deps.credentials.key(asker, settings),
    refuseBrokerKey: (settings) => run.deps.credentials.invalidate(asker, settings),
    emit: (type, payload) => run.events.emit(type, payload),
    modes: run.deps.outputModes,
    media,
  };
}
