import { z } from 'zod';
import { ToolExposure } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { LlmParameters, ProviderSettings } from '../providers/provider.ts';

/**
 * What a run takes from its agent configuration: the system prompt (prompt
 * layers, then extra system blocks), the LLM provider and parameters, and the
 * tool exposure. Resolved through agent-registry `_agent.resolve` and cached
 * briefly per (tenant, agent); when the registry cannot answer, the run uses
 * the built-in default configuration (scripted provider, all tools).
 */

export interface AgentRunConfig {
  readonly agentId: string;
  readonly revisionId?: string | undefined;
  readonly system: string;
  readonly provider: ProviderSettings;
  readonly params: LlmParameters;
  readonly toolExposure?: ToolExposure | undefined;
}

/** The built-in default configuration's system prompt. */
export const DEFAULT_SYSTEM_PROMPT =
  'You are an agent of the Agent Run Service. Work toward the goal, call tools when they help, and finish with a concise answer.';

/** The configuration a run falls back to. */
export function defaultAgentConfig(agentId: string): AgentRunConfig {
  return { agentId, system: DEFAULT_SYSTEM_PROMPT, provider: { kind: 'scripted' }, params: {} };
}

const Text = z.looseObject({ text: z.string() });
/** The members of a configuration the engine reads; anything else is ignored. */
const ConfigShape = z.looseObject({
  prompt_layers: z.array(Text).optional(),
  extra_system_blocks: z.array(Text).optional(),
  llm_provider: z
    .looseObject({
      provider: z.enum(['scripted', 'openai']),
      base_url: z.string().optional(),
      model: z.string().optional(),
      api_key: z.string().optional(),
      script: z.array(z.record(z.string(), z.unknown())).optional(),
    })
    .optional(),
  llm_params: z
    .looseObject({
      model: z.string().optional(),
      temperature: z.number().optional(),
      top_p: z.number().optional(),
      max_tokens: z.int().optional(),
      stop: z.array(z.string()).optional(),
    })
    .optional(),
  tool_exposure: ToolExposure.optional(),
});
const ResolveReply = z.looseObject({
  agent_id: z.string(),
  revision_id: z.string().optional(),
  config: z.unknown(),
});

/** Builds a run configuration from a `_agent.resolve` reply; throws on a shape it cannot use. */
export function toAgentRunConfig(reply: unknown): AgentRunConfig {
  const { agent_id, revision_id, config } = ResolveReply.parse(reply);
  if (config === undefined || config === null) return { ...defaultAgentConfig(agent_id), revisionId: revision_id };
  const c = ConfigShape.parse(config);
  const blocks = [...(c.prompt_layers ?? []), ...(c.extra_system_blocks ?? [])].map((b) => b.text);
  const p = c.llm_provider;
  return {
    agentId: agent_id,
    revisionId: revision_id,
    system: blocks.length > 0 ? blocks.join('\n\n') : DEFAULT_SYSTEM_PROMPT,
    provider:
      p === undefined
        ? { kind: 'scripted' }
        : { kind: p.provider, baseUrl: p.base_url, model: p.model, apiKey: p.api_key, script: p.script },
    params: { ...(c.llm_params ?? {}) },
    toolExposure: c.tool_exposure,
  };
}

export interface AgentConfigResolver {
  resolve(owner: VerifiedIdentity, agentId: string): Promise<AgentRunConfig>;
}

/** Options of {@link createAgentConfigResolver}. */
export interface AgentConfigResolverOptions {
  readonly rpc: RpcClient;
  readonly logger: Logger;
  /** How long a resolved configuration is reused, in ms. */
  readonly cacheMs: number;
  /** @default 2000 */
  readonly timeoutMs?: number;
}

interface CacheEntry {
  readonly until: number;
  readonly config: Promise<AgentRunConfig>;
}

const MAX_CACHE_ENTRIES = 1_000;

/** Resolves agent configurations over NATS, with a small time-bounded cache. */
export function createAgentConfigResolver(options: AgentConfigResolverOptions): AgentConfigResolver {
  const cache = new Map<string, CacheEntry>();

  async function fetchConfig(owner: VerifiedIdentity, agentId: string): Promise<AgentRunConfig> {
    try {
      const reply = await options.rpc.call(
        'agent-registry',
        '_agent.resolve',
        owner,
        { tenant: owner.tenant, agent_id: agentId },
        { timeoutMs: options.timeoutMs ?? 2_000 },
      );
      return toAgentRunConfig(reply);
    } catch (error) {
      options.logger.warn({ err: error, agentId }, 'agent configuration unavailable; using the built-in default');
      return defaultAgentConfig(agentId);
    }
  }

  return {
    resolve(owner, agentId): Promise<AgentRunConfig> {
      const key = JSON.stringify([owner.tenant, agentId]);
      const now = Date.now();
      const hit = cache.get(key);
      if (hit !== undefined && hit.until > now) return hit.config;
      if (cache.size >= MAX_CACHE_ENTRIES) cache.clear();
      const config = fetchConfig(owner, agentId);
      cache.set(key, { until: now + options.cacheMs, config });
      return config;
    },
  };
}
