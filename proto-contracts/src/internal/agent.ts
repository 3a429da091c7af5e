import { z } from 'zod';
import { defineInternalEndpoint } from '../internal-def.ts';
import { AgentId } from '../schemas/agent-config.ts';
import { JsonObject } from '../schemas/common.ts';
import { ApprovalPolicy } from '../schemas/tool.ts';
import { Count, OwnerTriple, tripleShape } from './shapes.ts';

/** The refusal of an agent id a tenant may not run (shared by every endpoint that resolves one). */
export const UNKNOWN_AGENT = {
  code: 'invalid_request',
  retryable: false,
  summary:
    "the agent id names no configuration the tenant may run: unknown, another tenant's or retired (one message for all three)",
} as const;

/** `_agent.resolve`: an agent of a tenant. */
export const AgentResolveRequest = z.strictObject({ tenant: z.string().min(1), agent_id: AgentId });
export type AgentResolveRequest = z.infer<typeof AgentResolveRequest>;

/** The head revision of the agent; `revision_id` is null for the built-in default configuration. */
export const AgentResolveReply = z.object({
  agent_id: z.string(),
  revision_id: z.string().nullable(),
  config: JsonObject.describe('AgentConfigContent of the revision'),
});
export type AgentResolveReply = z.infer<typeof AgentResolveReply>;

/**
 * `_agent.resolve`: asked by `start` (run-executor). The configured default
 * agent always resolves (to the built-in configuration while it has no
 * revision). A body tenant other than the caller's needs `admin` (403
 * `scope_mismatch`).
 */
export const AGENT_RESOLVE = defineInternalEndpoint({
  name: '_agent.resolve',
  service: 'agent-registry',
  callers: ['run-executor'],
  gate: 'caller',
  request: AgentResolveRequest,
  reply: AgentResolveReply,
  refusals: { unknown_agent: UNKNOWN_AGENT },
  summary: 'the head revision of an agent of the tenant',
});

/** `_agent.effective_config`: whose run, and which agent. */
export const AgentEffectiveConfigRequest = z.strictObject({ ...tripleShape, agent_id: AgentId });
export type AgentEffectiveConfigRequest = z.infer<typeof AgentEffectiveConfigRequest>;

/** What one layer set (dotted configuration paths, in the order set). */
export const EffectiveLayer = z.object({
  layer: z.string().describe('agent | tenant_overrides | user_variant | session | skills'),
  revision_id: z
    .string()
    .nullable()
    .optional()
    .describe('agent: its revision (null: built-in); user_variant: the variant'),
  applied_keys: z.array(z.string()),
});
export type EffectiveLayer = z.infer<typeof EffectiveLayer>;

/** A skill of the effective configuration. */
export const EffectiveSkill = z.object({
  name: z.string(),
  scope: z.string(),
  origin: z.string(),
  content_hash: z.string(),
});
export type EffectiveSkill = z.infer<typeof EffectiveSkill>;

/** The run's resolved configuration, every layer applied but the run overrides. */
export const AgentEffectiveConfigReply = z.object({
  agent_id: z.string(),
  revision_id: z.string().nullable().describe("the agent layer's revision; null for the built-in default"),
  variant_revision_id: z.string().optional(),
  config: JsonObject.describe('AgentConfigContent with every layer applied'),
  source_disables: z.array(z.string()),
  skills: z.array(EffectiveSkill),
  layers: z.array(EffectiveLayer),
  content_hash: z.string().describe('sha256: of the canonical JSON of {config, source_disables}'),
  approval_policies: z
    .record(z.string(), ApprovalPolicy)
    .default({})
    .describe("the tenant's tools.set_approval_policy choices, by exposed tool name (built-ins included)"),
});
export type AgentEffectiveConfigReply = z.infer<typeof AgentEffectiveConfigReply>;

/**
 * `_agent.effective_config`: asked by the run engine when it first claims a
 * run. Layers agent → tenant overrides → user variant → session → skills.
 * The body must name the calling identity (403 `scope_mismatch`) unless the
 * caller holds `admin`.
 */
export const AGENT_EFFECTIVE_CONFIG = defineInternalEndpoint({
  name: '_agent.effective_config',
  service: 'agent-registry',
  callers: ['run-executor'],
  gate: 'caller',
  request: AgentEffectiveConfigRequest,
  reply: AgentEffectiveConfigReply,
  refusals: { unknown_agent: UNKNOWN_AGENT },
  summary: "the effective configuration of the owner's run of an agent",
});

/** What the erasure removed from the session-user tier. */
export const AgentEraseSessionReply = z.object({ skills_deleted: Count, settings_deleted: Count });
export type AgentEraseSessionReply = z.infer<typeof AgentEraseSessionReply>;

/**
 * `_agent.erase_session`: part of the erasure cascade of sessions.delete.
 * Erases the session's skills and settings (the session-user tier) after
 * marking the session erased, so that no session-tier write lands under it
 * again (410 `session_erased`). Idempotent.
 */
export const AGENT_ERASE_SESSION = defineInternalEndpoint({
  name: '_agent.erase_session',
  service: 'agent-registry',
  callers: ['session'],
  gate: 'caller',
  request: OwnerTriple,
  reply: AgentEraseSessionReply,
  refusals: {},
  summary: "erases a session's skills and settings (the session-user tier of agent_config)",
});
