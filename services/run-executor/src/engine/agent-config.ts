import { z } from 'zod';
import { AGENT_EFFECTIVE_CONFIG, AgentEffectiveConfigReply, isServiceError, ToolExposure } from '@ars/contracts';
import type { ApprovalPolicy, VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { LlmParameters, ProviderSettings } from '../providers/provider.ts';

/**
 * A run's effective configuration: resolved once, when the run is first
 * claimed, by agent-registry `_agent.effective_config` (layers agent →
 * tenant overrides → user variant → session → skills), then the session's
 * run overrides (`run-overrides.ts`), and recorded on the task. What the
 * engine reads of it is an {@link AgentRunConfig}: the system prompt (prompt
 * layers, then extra system blocks), the provider, the LLM parameters, the
 * tool exposure, source disables and MCP servers, and the default input
 * disposition.
 */

/** What one layer changed (dotted configuration paths), as agent-registry reports it; `run_overrides` is ours. */
export interface EffectiveLayer {
  readonly layer: string;
  readonly revision_id?: string | null | undefined;
  readonly applied_keys: readonly string[];
}

/** A skill of the effective configuration. */
export interface EffectiveSkill {
  readonly name: string;
  readonly scope: string;
  readonly origin: string;
  readonly content_hash: string;
}

/** The effective configuration as resolved and recorded on the task (`effective_config`). */
export interface EffectiveConfigRecord {
  readonly agent_id: string;
  /** The agent layer's revision; null for the built-in default. */
  readonly revision_id: string | null;
  readonly variant_revision_id?: string | undefined;
  /** `AgentConfigContent` with every layer applied. */
  readonly config: Readonly<Record<string, unknown>>;
  readonly source_disables: readonly string[];
  readonly skills: readonly EffectiveSkill[];
  readonly layers: readonly EffectiveLayer[];
  /** `sha256:` of the canonical JSON of `{config, source_disables}`. */
  readonly content_hash: string;
  /** The tenant's approval policies by tool name, as resolved with the configuration (absent on older records). */
  readonly approval_policies?: Readonly<Record<string, ApprovalPolicy>>;
  /** `agent-registry`; `builtin` only on tasks recorded before runs failed closed without the registry. */
  readonly source: 'agent-registry' | 'builtin';
  readonly resolved_at: string;
}

/** What the engine runs with. */
export interface AgentRunConfig {
  readonly agentId: string;
  readonly revisionId?: string | null | undefined;
  readonly system: string;
  readonly provider: ProviderSettings;
  readonly params: LlmParameters;
  readonly toolExposure?: ToolExposure | undefined;
  /** Tool sources to hide: `builtin`, or an MCP server id. */
  readonly sourceDisables: readonly string[];
  /** Server ids of the agent's MCP connections (`mcp_connections`). */
  readonly mcpServers: readonly string[];
  /** The tenant's approval policies by tool name (`tools.set_approval_policy`), built-ins included. */
  readonly approvalPolicies: Readonly<Record<string, ApprovalPolicy>>;
  /** `multimodal.default_disposition`, the second layer of an input artifact's disposition. */
  readonly defaultDisposition?: string | undefined;
  /** `completion_hook.tool`: the tool run once the run's terminal event is out (`completion-hook.ts`). */
  readonly completionHook?: string | undefined;
}

/** The built-in default configuration's system prompt. */
export const DEFAULT_SYSTEM_PROMPT =
  'You are an agent of the Agent Run Service. Work toward the goal, call tools when they help, and finish with a concise answer.';

const Text = z.looseObject({ text: z.string() });
/** The members of a configuration the engine reads; anything else is ignored. */
const ConfigShape = z.looseObject({
  prompt_layers: z.array(Text).optional(),
  extra_system_blocks: z.array(Text).optional(),
  llm_provider: z
    .looseObject({
      provider_name: z.string().optional(),
      provider: z.enum(['scripted', 'openai']),
      base_url: z.string().optional(),
      model: z.string().optional(),
      api_key: z.string().optional(),
      inference_broker: z.string().optional(),
      script: z.array(z.record(z.string(), z.unknown())).optional(),
    })
    .optional(),
  llm_params: z
    .looseObject({
      model: z.string().optional(),
      temperature: z.number().optional(),
      top_p: z.number().optional(),
      max_tokens: z.int().optional(),
      reasoning_effort: z.string().optional(),
      stop: z.array(z.string()).optional(),
    })
    .optional(),
  tool_exposure: ToolExposure.optional(),
  mcp_connections: z.array(z.looseObject({ server_id: z.string() })).optional(),
  multimodal: z.looseObject({ default_disposition: z.string().optional() }).optional(),
  completion_hook: z.looseObject({ tool: z.string() }).optional(),
});

/** Reads a `_agent.effective_config` answer (its contract's reply schema); throws on a shape it cannot use. */
export function parseEffectiveReply(reply: unknown, now = new Date()): EffectiveConfigRecord {
  const r = AgentEffectiveConfigReply.parse(reply);
  return {
    agent_id: r.agent_id,
    revision_id: r.revision_id,
    ...(r.variant_revision_id === undefined ? {} : { variant_revision_id: r.variant_revision_id }),
    config: r.config,
    source_disables: r.source_disables,
    skills: r.skills.map(({ name, scope, origin, content_hash }) => ({ name, scope, origin, content_hash })),
    layers: r.layers.map((l) => ({
      layer: l.layer,
      ...(l.revision_id === undefined ? {} : { revision_id: l.revision_id }),
      applied_keys: l.applied_keys,
    })),
    content_hash: r.content_hash,
    approval_policies: r.approval_policies,
    source: 'agent-registry',
    resolved_at: now.toISOString(),
  };
}

/** What the engine runs with, from an effective configuration (run overrides already applied). */
export function toAgentRunConfig(
  record: Pick<EffectiveConfigRecord, 'agent_id' | 'revision_id' | 'config' | 'source_disables' | 'approval_policies'>,
): AgentRunConfig {
  const c = ConfigShape.parse(record.config);
  const blocks = [...(c.prompt_layers ?? []), ...(c.extra_system_blocks ?? [])].map((b) => b.text);
  const p = c.llm_provider;
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(c.llm_params ?? {})) if (value !== undefined) params[key] = value;
  return {
    agentId: record.agent_id,
    revisionId: record.revision_id,
    system: blocks.length > 0 ? blocks.join('\n\n') : DEFAULT_SYSTEM_PROMPT,
    provider:
      p === undefined
        ? { kind: 'scripted' }
        : {
            kind: p.provider,
            name: p.provider_name,
            baseUrl: p.base_url,
            model: p.model,
            apiKey: p.api_key,
            inferenceBroker: p.inference_broker,
            script: p.script,
          },
    params: params as LlmParameters,
    toolExposure: c.tool_exposure,
    sourceDisables: record.source_disables,
    mcpServers: (c.mcp_connections ?? []).map((connection) => connection.server_id),
    approvalPolicies: record.approval_policies ?? {},
    defaultDisposition: c.multimodal?.default_disposition,
    completionHook: c.completion_hook?.tool,
  };
}

/** The run's agent no longer resolves (retired or gone since its start): the run fails `agent_unavailable`. */
export class AgentConfigRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentConfigRefused';
  }
}

export interface AgentConfigResolver {
  /**
   * The effective configuration of the owner's run of `agentId` (run
   * overrides not applied). Refused by agent-registry → {@link AgentConfigRefused};
   * registry not answering → its error (`unavailable`, `timeout`): the run
   * is retried later, whatever the agent.
   */
  resolve(owner: VerifiedIdentity, agentId: string): Promise<EffectiveConfigRecord>;
  /** Drops what is cached of a tenant's agent (fleet control's agents.restart): its next run resolves it afresh. */
  invalidate?(tenant: string, agentId: string): void;
  /** Stops watching for configuration changes. */
  stop?(): void;
}

/** Options of {@link createAgentConfigResolver}. */
export interface AgentConfigResolverOptions {
  readonly rpc: RpcClient;
  readonly logger: Logger;
  /**
   * How long a resolved configuration is reused at most, in ms; 0 asks for
   * every run and only shares a request already under way.
   */
  readonly cacheMs: number;
  /**
   * Calls `onChange` whenever what configurations are resolved from may have
   * changed (`watchConfigChanges` of the bus): every kept configuration is
   * dropped then. Without it nothing is kept beyond `cacheMs` either way.
   */
  readonly watch?: (onChange: () => void) => { stop(): void };
  /** @default 2000 */
  readonly timeoutMs?: number;
}

interface CacheEntry {
  until: number;
  readonly config: Promise<EffectiveConfigRecord>;
}

/** Configurations kept at most; the least recently used goes first. */
export const MAX_CACHE_ENTRIES = 1_000;

/**
 * Resolves effective configurations over NATS. Identical requests under way
 * at once share one call; with `cacheMs` > 0 an answer is reused for runs of
 * the same (tenant, user, session, agent) until a configuration change is
 * announced (`watch`), or `cacheMs` passed. A change drops every kept answer
 * and every request under way from the cache (their runs, claimed before
 * the change, still get them), so a run claimed after the announcement
 * resolves afresh; the bound only covers notices a connection lost.
 */
export function createAgentConfigResolver(options: AgentConfigResolverOptions): AgentConfigResolver {
  const cache = new Map<string, CacheEntry>();
  let warned = false;
  const watch = options.cacheMs > 0 ? options.watch?.(() => cache.clear()) : undefined;

  async function fetchConfig(owner: VerifiedIdentity, agentId: string): Promise<EffectiveConfigRecord> {
    try {
      const reply = await callInternal(
        options.rpc,
        AGENT_EFFECTIVE_CONFIG,
        owner,
        { tenant: owner.tenant, user: owner.user, session: owner.session, agent_id: agentId },
        { timeoutMs: options.timeoutMs ?? 2_000 },
      );
      warned = false;
      return parseEffectiveReply(reply);
    } catch (error) {
      if (!isServiceError(error)) throw error;
      if (error.code === 'invalid_request' || error.code === 'not_found') throw new AgentConfigRefused(error.message);
      // Fails closed, the default agent included: a run never runs on a configuration the operator did not
      // set (the registry itself answers the built-in default for an agent with no revision). The run is retried.
      if (!warned) {
        warned = true;
        options.logger.warn(
          { err: error, agentId },
          'agent-registry did not answer; the run waits for its configuration',
        );
      }
      throw error;
    }
  }

  return {
    stop() {
      watch?.stop();
      cache.clear();
    },
    invalidate(tenant, agentId) {
      for (const key of [...cache.keys()]) {
        const [keyTenant, , , keyAgent] = JSON.parse(key) as string[];
        if (keyTenant === tenant && keyAgent === agentId) cache.delete(key);
      }
    },
    resolve(owner, agentId): Promise<EffectiveConfigRecord> {
      const key = JSON.stringify([owner.tenant, owner.user, owner.session, agentId]);
      const now = Date.now();
      const hit = cache.get(key);
      if (hit !== undefined && hit.until > now) {
        // Most recently used last: the map's order is the eviction order.
        cache.delete(key);
        cache.set(key, hit);
        return hit.config;
      }
      if (hit !== undefined) cache.delete(key);
      if (cache.size >= MAX_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
      const entry: CacheEntry = { until: Number.POSITIVE_INFINITY, config: fetchConfig(owner, agentId) };
      cache.set(key, entry);
      // Shared while under way; afterwards kept `cacheMs` (a failure never is).
      entry.config.then(
        () => {
          entry.until = Date.now() + options.cacheMs;
          if (options.cacheMs <= 0 && cache.get(key) === entry) cache.delete(key);
        },
        () => {
          if (cache.get(key) === entry) cache.delete(key);
        },
      );
      return entry.config;
    },
  };
}
