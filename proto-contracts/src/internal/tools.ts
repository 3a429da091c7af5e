import { z } from 'zod';
import { defineInternalEndpoint } from '../internal-def.ts';
import { AgentId } from '../schemas/agent-config.ts';
import { JsonObject, Timestamp } from '../schemas/common.ts';
import { ApprovalPolicy, SideEffectClass } from '../schemas/tool.ts';
import { UNKNOWN_AGENT } from './agent.ts';
import { AuthRequiredServer } from './oauth.ts';
import { Count, tripleShape } from './shapes.ts';

/**
 * The tool catalogue and MCP calls between the run engine (run-executor) and
 * the tool host (agent-registry, which holds the MCP connections):
 *
 * - `_tools.catalogue`: the MCP tools a run of an agent may call, with their
 *   JSON Schemas, and the tenant's approval policies (built-ins included);
 * - `_mcp.call_tool` / `_mcp.cancel_call`: one call of an MCP tool, and the
 *   hard cancel of a call in flight (the host sends MCP's
 *   `notifications/cancelled`);
 * - `_tools.record_calls`: the engine reports every tool call's outcome, so
 *   that `tools.metrics` and `tools.content_stats` count real calls.
 */

/** The name a run sees for an MCP tool: `<server_id>__<tool>`, within what LLM function names allow. */
export const MCP_TOOL_NAME_SEPARATOR = '__';

/** An MCP tool as the catalogue lists it for a run. */
export const CatalogueTool = z.object({
  name: z.string().describe('exposed name: <server_id>__<tool>'),
  server_id: z.string(),
  server_tool: z.string().describe("the tool's own name on its server"),
  transport: z.string().describe('stdio | streamable_http | sse'),
  description: z.string(),
  input_schema: JsonObject.describe("JSON Schema of the arguments, as the server declared it"),
  side_effect: SideEffectClass.describe("from the tool's annotations: readOnlyHint → read_only, idempotentHint → idempotent, else unsafe"),
  approval_policy: ApprovalPolicy,
  tags: z.array(z.string()),
  output_schema: JsonObject.optional().describe(
    "JSON Schema of the result's structured content, as the server declared it",
  ),
});
export type CatalogueTool = z.infer<typeof CatalogueTool>;

/** `_tools.catalogue`: whose run, and which agent (absent: the default agent). */
export const ToolsCatalogueRequest = z.strictObject({ ...tripleShape, agent_id: AgentId.optional() });
export type ToolsCatalogueRequest = z.infer<typeof ToolsCatalogueRequest>;

export const ToolsCatalogueReply = z.object({
  tools: z.array(CatalogueTool),
  /** Approval policies the tenant set with `tools.set_approval_policy`, by exposed tool name (built-ins included). */
  approval_policies: z.record(z.string(), ApprovalPolicy),
  /** Servers of the agent whose tools could not be listed now (their tools are missing from `tools`). */
  unavailable_servers: z.array(z.object({ server_id: z.string(), state: z.string(), reason: z.string() })),
  /** OAuth-bound servers with no usable grant for the run's binding scope (their tools are missing from `tools`). */
  auth_required: z.array(AuthRequiredServer).default([]),
});
export type ToolsCatalogueReply = z.infer<typeof ToolsCatalogueReply>;

export const TOOLS_CATALOGUE = defineInternalEndpoint({
  name: '_tools.catalogue',
  service: 'agent-registry',
  callers: ['run-executor'],
  gate: 'caller',
  request: ToolsCatalogueRequest,
  reply: ToolsCatalogueReply,
  refusals: { unknown_agent: UNKNOWN_AGENT },
  summary: "the MCP tools and approval policies of the owner's run of an agent",
});

/** `_mcp.call_tool`: one call of one MCP tool for a run. */
export const McpCallToolRequest = z.strictObject({
  ...tripleShape,
  agent_id: AgentId.optional(),
  run: z.string().min(1),
  server_id: z.string().min(1),
  tool: z.string().min(1).describe("the tool's own name on its server"),
  arguments: JsonObject,
  call_id: z.string().min(1).max(256).describe('unique per attempt; names the call for `_mcp.cancel_call`'),
  timeout_ms: z.int().min(1).max(3_600_000),
});
export type McpCallToolRequest = z.infer<typeof McpCallToolRequest>;

/**
 * The scheme of a `resource_link` that names an artifact
 * (`artifact://<artifact_id>`): what a result block or a resource read
 * larger than `MCP_OFFLOAD_THRESHOLD_BYTES` is replaced by, once stored as an
 * artifact of the run's session (readable with `artifact_read`).
 */
export const ARTIFACT_URI_PREFIX = 'artifact://';

/** The `resource_link` uri of an artifact. */
export function artifactUri(artifactId: string): string {
  return `${ARTIFACT_URI_PREFIX}${artifactId}`;
}

/** One part of a result that the host stored as an artifact (and replaced by a `resource_link`). */
export const OffloadedPart = z.object({
  artifact_id: z.string(),
  size_bytes: Count.describe("the artifact's size: the part's bytes, decoded from base64 for binary parts"),
  mime_type: z.string(),
});
export type OffloadedPart = z.infer<typeof OffloadedPart>;

export const McpCallToolReply = z.object({
  /**
   * MCP content blocks as the server returned them (text, image, audio,
   * resource_link, resource), except the parts offloaded to artifacts, each
   * replaced by a `resource_link` to `artifact://<artifact_id>`.
   */
  content: z.array(JsonObject),
  structured_content: JsonObject.optional(),
  /** The server reported a tool-level error (`isError`): the call ran and failed. */
  is_error: z.boolean(),
  /** Size of the result as received, in bytes of JSON. */
  bytes_out: Count,
  /** The server's time for the call as the host measured it, in ms. */
  server_ms: z.number().nonnegative(),
  /** The parts stored as artifacts (what `_tools.record_calls` counts as `artifacts_offloaded`); absent: none. */
  offloaded: z.array(OffloadedPart).optional(),
});
export type McpCallToolReply = z.infer<typeof McpCallToolReply>;

export const MCP_CALL_TOOL = defineInternalEndpoint({
  name: '_mcp.call_tool',
  service: 'agent-registry',
  callers: ['run-executor'],
  gate: 'caller',
  request: McpCallToolRequest,
  reply: McpCallToolReply,
  refusals: {
    unknown_agent: UNKNOWN_AGENT,
    unknown_tool: {
      code: 'invalid_request',
      retryable: false,
      summary: 'the agent has no such server, or the server no such tool',
    },
    server_unavailable: {
      code: 'unavailable',
      retryable: true,
      summary: 'the server is not connected (starting, restarting after a crash, or unreachable)',
    },
    call_timeout: { code: 'timeout', retryable: true, summary: 'the server did not answer within timeout_ms' },
    call_cancelled: { code: 'conflict', retryable: false, summary: 'the call was cancelled by `_mcp.cancel_call`' },
    protocol_error: {
      code: 'internal',
      retryable: false,
      summary: 'the server answered with a JSON-RPC error or a malformed result',
    },
    auth_required: {
      code: 'conflict',
      retryable: false,
      summary: 'the server is OAuth-bound and the grant of the run\'s binding scope is missing, revoked or expired: authorize with `_oauth.begin`',
    },
    offload_failed: {
      code: 'unavailable',
      retryable: true,
      summary:
        'the result is over MCP_OFFLOAD_THRESHOLD_BYTES and could not be stored as artifacts (the artifact service refused or did not answer)',
    },
    result_too_large: {
      code: 'payload_too_large',
      retryable: false,
      summary:
        'the result is larger than the host offloads (MCP_OFFLOAD_MAX_BYTES), or, offloaded, still larger than it forwards (MCP_RESULT_MAX_BYTES)',
    },
  },
  summary: "one call of an MCP tool for the owner's run",
});

/** `_mcp.cancel_call`: hard cancel of a call in flight. */
export const McpCancelCallRequest = z.strictObject({ ...tripleShape, call_id: z.string().min(1).max(256) });
export type McpCancelCallRequest = z.infer<typeof McpCancelCallRequest>;

export const McpCancelCallReply = z.object({
  cancelled: z.boolean().describe('false: no call of that id is in flight on this host (ended, or on another replica)'),
});
export type McpCancelCallReply = z.infer<typeof McpCancelCallReply>;

export const MCP_CANCEL_CALL = defineInternalEndpoint({
  name: '_mcp.cancel_call',
  service: 'agent-registry',
  callers: ['run-executor'],
  gate: 'caller',
  request: McpCancelCallRequest,
  reply: McpCancelCallReply,
  refusals: {},
  summary: 'cancel an MCP tool call in flight',
});

/** One tool call's outcome, as the engine saw it. */
export const ToolCallRecord = z.strictObject({
  tool: z.string().min(1).max(512).describe('exposed name'),
  transport: z.string().min(1).max(64),
  source: z.string().min(1).max(256).describe('builtin, or the MCP server id'),
  outcome: z.enum(['completed', 'failed', 'invalid_args', 'policy_exhausted', 'rejected']),
  approval_requested: z.boolean(),
  attempts: z.int().min(0).max(1_000),
  duration_ms: z.number().nonnegative(),
  bytes_in: Count.describe('arguments, bytes of JSON'),
  bytes_out: Count.describe('result, bytes as fed back to the planner'),
  artifacts_offloaded: Count,
  at: Timestamp,
});
export type ToolCallRecord = z.infer<typeof ToolCallRecord>;

/** `_tools.record_calls`: a batch of one tenant's calls. */
export const ToolsRecordCallsRequest = z.strictObject({
  tenant: z.string().min(1),
  calls: z.array(ToolCallRecord).min(1).max(1_000),
  batch_id: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe(
      "the sender's id of the batch, the same on every retry: a batch id the host counted already (within 24 h) is not counted again",
    ),
});
export type ToolsRecordCallsRequest = z.infer<typeof ToolsRecordCallsRequest>;

export const ToolsRecordCallsReply = z.object({
  recorded: Count.describe('calls counted by this request (0 for a repeated batch)'),
  duplicate: z.boolean().optional().describe('true: the batch id was counted before, nothing was added'),
});
export type ToolsRecordCallsReply = z.infer<typeof ToolsRecordCallsReply>;

export const TOOLS_RECORD_CALLS = defineInternalEndpoint({
  name: '_tools.record_calls',
  service: 'agent-registry',
  callers: ['run-executor'],
  gate: 'caller',
  request: ToolsRecordCallsRequest,
  reply: ToolsRecordCallsReply,
  refusals: {},
  summary: "record a batch of a tenant's tool call outcomes (tools.metrics, tools.content_stats)",
});
