import { z } from 'zod';
import { IdentityQuad } from '../identity.ts';
import { Id, Timestamp, record } from './common.ts';
import { ReasoningEffort, Temperature } from './governance.ts';
import { Disposition } from './task.ts';
import { McpTransport } from './mcp.ts';
import { ApprovalPolicy } from './tool.ts';

/** An agent configuration id (the `agent_id` of start). */
export const AgentId = z.string().min(1).max(128).describe('agent configuration id');

/** One prompt layer; layers apply in list order. */
export const PromptLayer = z.strictObject({
  name: z.string().min(1).max(128),
  text: z.string().max(65_536),
});
export type PromptLayer = z.infer<typeof PromptLayer>;

/** An extra system block appended after the prompt layers. */
export const SystemBlock = z.strictObject({
  name: z.string().min(1).max(128).optional(),
  text: z.string().min(1).max(65_536),
});
export type SystemBlock = z.infer<typeof SystemBlock>;

/** LLM provider kinds: the offline `scripted` provider and any OpenAI-compatible server. */
export const LLM_PROVIDER_KINDS = ['scripted', 'openai'] as const;

/** The LLM provider of an agent. The key itself is held by governance (governance.rotate_key). */
export const LlmProviderConfig = z.strictObject({
  provider_name: z.string().min(1).max(128).describe('label of this installation (event ProviderName)'),
  provider: z.enum(LLM_PROVIDER_KINDS).describe('provider kind (event Provider)'),
  inference_broker: z.string().max(256).optional().describe('broker that fetches credentials (event InferenceBroker)'),
  base_url: z.url().optional().describe('openai: the chat-completions server'),
  model: z.string().min(1).max(256).optional(),
  script: z.array(z.record(z.string(), z.unknown())).max(1000).optional().describe('scripted: the turns to play'),
});
export type LlmProviderConfig = z.infer<typeof LlmProviderConfig>;

/** LLM parameters of an agent. */
export const LlmParams = z.strictObject({
  model: z.string().min(1).max(256).optional(),
  temperature: Temperature.optional(),
  top_p: z.number().min(0).max(1).optional(),
  max_tokens: z.int().positive().optional(),
  reasoning_effort: ReasoningEffort.optional(),
  stop: z.array(z.string().min(1)).max(8).optional(),
});
export type LlmParams = z.infer<typeof LlmParams>;

/** Which tools a run of the agent may see. */
export const ToolExposure = z.strictObject({
  mode: z.enum(['all', 'allow_list', 'deny_list']),
  tools: z.array(z.string().min(1)).max(500).default([]),
});
export type ToolExposure = z.infer<typeof ToolExposure>;

/** An MCP connection of an agent. Secrets are referenced by name, never inlined. */
export const McpConnection = z.strictObject({
  server_id: Id,
  transport: McpTransport,
  url: z.url().optional().describe('streamable_http and sse'),
  command: z.string().min(1).optional().describe('stdio'),
  args: z.array(z.string()).max(100).optional(),
  oauth_provider: z.string().min(1).optional().describe('provider_name of an installed OAuth provider'),
  binding_scope: z
    .enum(['tenant', 'user', 'session'])
    .optional()
    .describe(
      "OAuth-bound servers: whose grant a run uses: the tenant's one grant, the run owner's (user, the default) or the run's session's",
    ),
  approval_policy: ApprovalPolicy.optional(),
});
export type McpConnection = z.infer<typeof McpConnection>;

/** An OAuth provider installed on an agent. */
export const OAuthProviderConfig = z.strictObject({
  provider_name: z.string().min(1).max(128),
  credential_broker: z.string().min(1).max(256),
  authorize_url: z.url().optional(),
  token_url: z.url().optional(),
  client_id: z.string().min(1).optional(),
  scopes: z.array(z.string().min(1)).max(100).optional(),
});
export type OAuthProviderConfig = z.infer<typeof OAuthProviderConfig>;

/** Binds an MCP server's tools to an OAuth provider with the scopes they need. */
export const OAuthMcpCapability = z.strictObject({
  server_id: Id,
  provider_name: z.string().min(1).max(128),
  scopes: z.array(z.string().min(1)).max(100),
});
export type OAuthMcpCapability = z.infer<typeof OAuthMcpCapability>;

/**
 * The content of an agent configuration revision. Every setter writes a new
 * revision with one member replaced.
 */
export const AgentConfigContent = z.strictObject({
  prompt_layers: z.array(PromptLayer).max(100).optional(),
  extra_system_blocks: z.array(SystemBlock).max(100).optional(),
  llm_provider: LlmProviderConfig.optional(),
  llm_params: LlmParams.optional(),
  tool_exposure: ToolExposure.optional(),
  mcp_connections: z.array(McpConnection).max(100).optional(),
  mcp_discovery_origins: z.array(z.string().min(1)).max(100).optional(),
  oauth_providers: z.array(OAuthProviderConfig).max(50).optional(),
  oauth_mcp_capabilities: z.array(OAuthMcpCapability).max(100).optional(),
  skills: z.array(z.string().min(1)).max(500).optional().describe('skill membership: names of skills the agent uses'),
  multimodal: z.strictObject({ default_disposition: Disposition.optional() }).optional(),
  completion_hook: z
    .strictObject({ tool: z.string().min(1) })
    .optional()
    .describe('tool run when a run completes'),
  naming_policy: z
    .strictObject({ mode: z.enum(['auto', 'off']) })
    .optional()
    .describe('automatic session titles'),
});
export type AgentConfigContent = z.infer<typeof AgentConfigContent>;

/** A configuration revision. The first revision of an agent has no parent. */
export const AgentConfigRevision = record({
  agent_id: z.string(),
  revision_id: z.string(),
  parent_revision_id: z.string().optional(),
  content_hash: z.string().describe('sha256:<hex> of the canonical JSON of config'),
  author: IdentityQuad,
  tenant: z.string(),
  user: z.string().optional().describe('per-user variant revisions only'),
  message: z.string().optional(),
  created_at: Timestamp,
  config: AgentConfigContent,
});
export type AgentConfigRevision = z.infer<typeof AgentConfigRevision>;

/** A revision without its content, as listed. */
export const AgentConfigRevisionSummary = record({
  agent_id: z.string(),
  revision_id: z.string(),
  parent_revision_id: z.string().optional(),
  content_hash: z.string(),
  author: IdentityQuad,
  message: z.string().optional(),
  created_at: Timestamp,
  head: z.boolean().describe('true for the current revision'),
});
export type AgentConfigRevisionSummary = z.infer<typeof AgentConfigRevisionSummary>;

/** One change of a structural diff; `path` is a JSON Pointer into the config. */
export const ConfigChange = record({
  path: z.string(),
  op: z.enum(['add', 'remove', 'replace']),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
});
export type ConfigChange = z.infer<typeof ConfigChange>;

/** A skill name: 1 to 128 characters of letters, digits, `.`, `_`, `-`. */
export const SkillName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);

/** A skill as written. */
export const Skill = z.strictObject({
  name: SkillName,
  description: z.string().max(4096).optional(),
  content: z.string().min(1).max(65_536),
  triggers: z.array(z.string().min(1).max(256)).max(50).optional(),
});
export type Skill = z.infer<typeof Skill>;

/**
 * Where a skill comes from: `manual` (written by a person), `pack:<name>`
 * (installed by a skill pack) or `proposed` (a candidate, e.g. written by a
 * run, not installed until promoted by an upsert of another origin).
 */
export const SkillOrigin = z
  .string()
  .regex(/^(manual|proposed|pack:[A-Za-z0-9][A-Za-z0-9._-]{0,127})$/)
  .describe('manual | proposed | pack:<name>');
export type SkillOrigin = z.infer<typeof SkillOrigin>;

/** A skill as stored and returned. */
export const SkillView = record({
  name: z.string(),
  description: z.string().optional(),
  content: z.string(),
  triggers: z.array(z.string()),
  origin: z.string().describe('where it came from: manual, pack:<name>, proposed, …'),
  scope: z.string().describe('tenant | agent | user | session'),
  content_hash: z.string(),
  updated_at: Timestamp,
});
export type SkillView = z.infer<typeof SkillView>;

export type AgentId = z.infer<typeof AgentId>;
export type SkillName = z.infer<typeof SkillName>;
