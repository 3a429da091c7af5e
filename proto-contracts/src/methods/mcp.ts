import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { AuthClass, MethodDef } from '../method-def.ts';
import { Cursor, Id, JsonObject, Timestamp, pageOf, pageRequest, requestOf, versioned } from '../schemas/common.ts';
import { McpBinding, McpServer } from '../schemas/mcp.ts';
import { onControl } from './routing.ts';

/**
 * The agent whose connection `server_id` names: absent, the one agent of the
 * caller's tenant that has a connection of that id (409 `conflict` when
 * several have one).
 */
const OwningAgent = Id.optional().describe(
  'the agent whose MCP connection server_id names; needed when several agents have one',
);

const byServer = () => requestOf({ server_id: Id, agent_id: OwningAgent });

/** mcp.servers.bindings.list: credential bindings, of one server or all. */
export const MCPServerBindingsListRequest = requestOf({ server_id: Id.optional(), ...pageRequest });
/** Response of `mcp.servers.bindings.list`. */
export const MCPServerBindingsListResponse = versioned({ ...pageOf(McpBinding) });

/** mcp.servers.get. */
export const MCPServerGetRequest = byServer();
/** Response of `mcp.servers.get`. */
export const MCPServerGetResponse = versioned({ server: McpServer });

/** mcp.servers.health. */
export const MCPServerHealthRequest = byServer();
/** Response of `mcp.servers.health`. */
export const MCPServerHealthResponse = versioned({
  server_id: z.string(),
  health: z
    .string()
    .describe("ok | degraded | down | auth_required (OAuth-bound: the caller's binding has no usable grant)"),
  checked_at: Timestamp,
  latency_ms: z.number().nonnegative().optional(),
  error: z.string().optional(),
});

/** mcp.servers.list. */
export const MCPServersListRequest = requestOf({
  filter: z
    .strictObject({
      agent_id: Id.optional(),
      state: z.string().min(1).optional(),
      transport: z.string().min(1).optional(),
      text: z.string().min(1).max(1024).optional(),
    })
    .optional(),
  ...pageRequest,
});
/** Response of `mcp.servers.list`. */
export const MCPServersListResponse = versioned({ ...pageOf(McpServer) });

/** mcp.servers.policy: the policy applied to a server's tools. */
export const MCPServerPolicyRequest = byServer();
/** Where a connection's traffic goes: the process it runs, or the host it reaches. */
export const McpEgress = z.looseObject({
  transport: z.string().describe('stdio | streamable_http | sse'),
  kind: z.enum(['process', 'network']).describe('process: a stdio server spawned by the host; network: an HTTP server'),
  command: z.string().optional().describe('stdio: the command run (its arguments are not shown)'),
  scheme: z.string().optional().describe('network: http | https'),
  host: z.string().optional().describe('network: host[:port] of the server URL'),
});
export type McpEgress = z.infer<typeof McpEgress>;

/** Response of `mcp.servers.policy`. */
export const MCPServerPolicyResponse = versioned({
  server_id: z.string(),
  raw_html_trusted: z.boolean(),
  approval_policy: JsonObject.optional(),
  allowed_tools: z
    .array(z.string())
    .optional()
    .describe(
      "exposed names (<server_id>__<tool>) of the server's tools a run may see under the agent's tool_exposure; absent while the server cannot list its tools",
    ),
  egress: McpEgress.optional(),
});

/** mcp.servers.probe: connect and list tools now. */
export const MCPServerProbeRequest = byServer();
/** Response of `mcp.servers.probe`. */
export const MCPServerProbeResponse = versioned({
  server_id: z.string(),
  ok: z.boolean(),
  latency_ms: z.number().nonnegative(),
  tools: z.array(z.string()).optional(),
  error: z.string().optional(),
});

const McpPrompt = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  arguments: z.array(JsonObject).optional(),
});

/** mcp.servers.prompts. */
export const MCPServerPromptsRequest = requestOf({ server_id: Id, agent_id: OwningAgent, cursor: Cursor.optional() });
/** Response of `mcp.servers.prompts`. */
export const MCPServerPromptsResponse = versioned({ server_id: z.string(), ...pageOf(McpPrompt) });

/** mcp.servers.refresh_binding (admin): refresh a binding's credentials. */
export const MCPServerRefreshBindingRequest = requestOf({ server_id: Id, binding_id: Id });
/** Response of `mcp.servers.refresh_binding`. */
export const MCPServerRefreshBindingResponse = versioned({ binding: McpBinding });

/** mcp.servers.refresh_discovery: re-list the server's tools, prompts and resources. */
export const MCPServerRefreshDiscoveryRequest = byServer();
/** Response of `mcp.servers.refresh_discovery`. */
export const MCPServerRefreshDiscoveryResponse = versioned({
  server_id: z.string(),
  tools: z.array(z.string()),
  prompt_count: z.int().nonnegative().optional(),
  resource_count: z.int().nonnegative().optional(),
  refreshed_at: Timestamp,
});

const McpResource = z.looseObject({
  uri: z.string(),
  name: z.string().optional(),
  mime_type: z.string().optional(),
  description: z.string().optional(),
});

/** mcp.servers.resources. */
export const MCPServerResourcesRequest = requestOf({ server_id: Id, agent_id: OwningAgent, cursor: Cursor.optional() });
/** Response of `mcp.servers.resources`. */
export const MCPServerResourcesResponse = versioned({ server_id: z.string(), ...pageOf(McpResource) });

/** mcp.servers.revoke_binding (admin). */
export const MCPServerRevokeBindingRequest = requestOf({ server_id: Id, binding_id: Id });
/** Response of `mcp.servers.revoke_binding`. */
export const MCPServerRevokeBindingResponse = versioned({ binding_id: z.string(), revoked: z.boolean() });

/** mcp.servers.set_raw_html_trust (admin): whether an app's raw HTML is rendered. */
export const MCPServerSetRawHTMLTrustRequest = requestOf({
  server_id: Id,
  agent_id: Id.optional().describe(
    "the agent whose connection server_id names; absent: the server id on every agent of the tenant (an agent's own setting wins)",
  ),
  trusted: z.boolean(),
});
/** Response of `mcp.servers.set_raw_html_trust`. */
export const MCPServerSetRawHTMLTrustResponse = versioned({
  server_id: z.string(),
  agent_id: z.string().optional(),
  trusted: z.boolean(),
  changed: z.boolean().optional().describe('false: the setting was already this (no event published)'),
});

/** mcp.apps.call_tool: call a tool of an MCP app on behalf of its UI. */
export const MCPAppCallToolRequest = requestOf({
  server_id: Id,
  tool_name: z.string().min(1).max(256).describe("the tool's own name on its server"),
  arguments: JsonObject.default({}),
  tool_call_id: Id.describe(
    "the originating tool call (mcp.app_available ToolCallID): its app context must be the caller's",
  ),
});
/** Response of `mcp.apps.call_tool`. */
export const MCPAppCallToolResponse = versioned({
  is_error: z.boolean(),
  content: z
    .array(JsonObject)
    .describe('MCP content blocks; a part over the offload threshold is a resource_link to artifact://<artifact_id>'),
  structured_content: JsonObject.optional(),
});

/** mcp.apps.tool_context: the context of an app's tool call. */
export const ToolContextRequest = requestOf({ server_id: Id, tool_call_id: Id });

/** How a console renders an app's UI resource. */
export const McpAppUi = z.looseObject({
  mode: z
    .enum(['raw_html', 'sandboxed'])
    .describe('raw_html: the server is trusted and html is given; sandboxed: read it and render it in a sandbox'),
  mime_type: z.string().describe('text/html;profile=mcp-app'),
  html: z.string().optional().describe('raw_html only: the UI resource as the server gave it'),
  sandbox: z
    .looseObject({
      iframe_sandbox: z.string().describe('the iframe sandbox attribute: scripts only, never same-origin'),
      csp: z.string().describe("the Content-Security-Policy to serve the view with (from the resource's _meta.ui.csp)"),
      read_with: z.string().describe('the method that reads the HTML: mcp.servers.read_resource'),
    })
    .optional(),
  resource_meta: JsonObject.optional().describe(
    "the resource's _meta.ui (csp, permissions, domain, prefersBorder), when read",
  ),
});
export type McpAppUi = z.infer<typeof McpAppUi>;

/** Response of `mcp.apps.tool_context`. */
export const ToolContextResponse = versioned({
  server_id: z.string(),
  tool_call_id: z.string(),
  tool_name: z.string(),
  resource_uri: z.string().optional(),
  display_mode: z.string().optional(),
  raw_html_trusted: z.boolean(),
  context: z
    .looseObject({
      agent_id: z.string(),
      run: z.string(),
      session: z.string(),
      arguments: JsonObject,
      result: z.looseObject({
        content: z.array(JsonObject),
        structured_content: JsonObject.optional(),
        is_error: z.boolean(),
      }),
      created_at: Timestamp,
      expires_at: Timestamp,
    })
    .describe('the recorded call: who ran it, its arguments and its result'),
  ui: McpAppUi,
});

/** mcp.servers.read_resource. */
export const ReadMCPResourceRequest = requestOf({
  server_id: Id,
  agent_id: OwningAgent,
  uri: z.string().min(1).max(2048),
});
/** Response of `mcp.servers.read_resource`. */
export const ReadMCPResourceResponse = versioned({
  uri: z.string(),
  contents: z.array(
    z.looseObject({
      uri: z.string(),
      mime_type: z.string().optional(),
      text: z.string().optional(),
      blob_base64: z.string().optional(),
      artifact_id: z.string().optional().describe('offloaded: the artifact holding the content (text and blob absent)'),
      size_bytes: z.int().nonnegative().optional().describe('offloaded: the content size in bytes'),
      resource_link: JsonObject.optional().describe('offloaded: a resource_link block to artifact://<artifact_id>'),
    }),
  ),
});

type Row = readonly [
  name: string,
  stem: string,
  auth: readonly AuthClass[],
  request: z.ZodType,
  response: z.ZodType,
  summary: string,
];

const ROWS: readonly Row[] = [
  [
    'mcp.servers.bindings.list',
    'MCPServerBindingsList',
    ['R'],
    MCPServerBindingsListRequest,
    MCPServerBindingsListResponse,
    'List credential bindings of MCP servers.',
  ],
  ['mcp.servers.get', 'MCPServerGet', ['R'], MCPServerGetRequest, MCPServerGetResponse, 'Read one MCP server.'],
  [
    'mcp.servers.health',
    'MCPServerHealth',
    ['R'],
    MCPServerHealthRequest,
    MCPServerHealthResponse,
    "Read an MCP server's health.",
  ],
  ['mcp.servers.list', 'MCPServersList', ['R'], MCPServersListRequest, MCPServersListResponse, 'List MCP servers.'],
  [
    'mcp.servers.policy',
    'MCPServerPolicy',
    ['R'],
    MCPServerPolicyRequest,
    MCPServerPolicyResponse,
    "Read an MCP server's policy.",
  ],
  [
    'mcp.servers.probe',
    'MCPServerProbe',
    ['M'],
    MCPServerProbeRequest,
    MCPServerProbeResponse,
    'Probe an MCP server now.',
  ],
  [
    'mcp.servers.prompts',
    'MCPServerPrompts',
    ['R'],
    MCPServerPromptsRequest,
    MCPServerPromptsResponse,
    "List an MCP server's prompts.",
  ],
  [
    'mcp.servers.refresh_binding',
    'MCPServerRefreshBinding',
    ['M', 'A'],
    MCPServerRefreshBindingRequest,
    MCPServerRefreshBindingResponse,
    "Refresh a binding's credentials (admin).",
  ],
  [
    'mcp.servers.refresh_discovery',
    'MCPServerRefreshDiscovery',
    ['M'],
    MCPServerRefreshDiscoveryRequest,
    MCPServerRefreshDiscoveryResponse,
    "Re-discover an MCP server's tools, prompts and resources.",
  ],
  [
    'mcp.servers.resources',
    'MCPServerResources',
    ['R'],
    MCPServerResourcesRequest,
    MCPServerResourcesResponse,
    "List an MCP server's resources.",
  ],
  [
    'mcp.servers.revoke_binding',
    'MCPServerRevokeBinding',
    ['M', 'A'],
    MCPServerRevokeBindingRequest,
    MCPServerRevokeBindingResponse,
    'Revoke a credential binding (admin).',
  ],
  [
    'mcp.servers.set_raw_html_trust',
    'MCPServerSetRawHTMLTrust',
    ['M', 'A'],
    MCPServerSetRawHTMLTrustRequest,
    MCPServerSetRawHTMLTrustResponse,
    "Trust or distrust an MCP server's raw HTML (admin).",
  ],
  [
    'mcp.apps.call_tool',
    'MCPAppCallTool',
    ['M'],
    MCPAppCallToolRequest,
    MCPAppCallToolResponse,
    'Call a tool of an MCP app.',
  ],
  [
    'mcp.apps.tool_context',
    'ToolContext',
    ['R'],
    ToolContextRequest,
    ToolContextResponse,
    "Read the context of an MCP app's tool call.",
  ],
  [
    'mcp.servers.read_resource',
    'ReadMCPResource',
    ['R'],
    ReadMCPResourceRequest,
    ReadMCPResourceResponse,
    'Read a resource of an MCP server.',
  ],
];

/** MCP servers and apps (agent-registry): `/v1/control/<method>`; stem notation. */
export const MCP_METHODS: readonly MethodDef[] = ROWS.map(([name, stem, auth, request, response, summary]) =>
  defineMethod({
    name,
    family: 'mcp',
    ...onControl(name),
    service: 'agent-registry',
    auth,
    requestName: `${stem}Request`,
    responseName: `${stem}Response`,
    request,
    response,
    summary,
  }),
);

export type ToolContextRequest = z.infer<typeof ToolContextRequest>;
export type ToolContextResponse = z.infer<typeof ToolContextResponse>;
export type ReadMCPResourceRequest = z.infer<typeof ReadMCPResourceRequest>;
export type ReadMCPResourceResponse = z.infer<typeof ReadMCPResourceResponse>;
export type MCPServerBindingsListRequest = z.infer<typeof MCPServerBindingsListRequest>;
export type MCPServerBindingsListResponse = z.infer<typeof MCPServerBindingsListResponse>;
export type MCPServerGetRequest = z.infer<typeof MCPServerGetRequest>;
export type MCPServerGetResponse = z.infer<typeof MCPServerGetResponse>;
export type MCPServerHealthRequest = z.infer<typeof MCPServerHealthRequest>;
export type MCPServerHealthResponse = z.infer<typeof MCPServerHealthResponse>;
export type MCPServersListRequest = z.infer<typeof MCPServersListRequest>;
export type MCPServersListResponse = z.infer<typeof MCPServersListResponse>;
export type MCPServerPolicyRequest = z.infer<typeof MCPServerPolicyRequest>;
export type MCPServerPolicyResponse = z.infer<typeof MCPServerPolicyResponse>;
export type MCPServerProbeRequest = z.infer<typeof MCPServerProbeRequest>;
export type MCPServerProbeResponse = z.infer<typeof MCPServerProbeResponse>;
export type MCPServerPromptsRequest = z.infer<typeof MCPServerPromptsRequest>;
export type MCPServerPromptsResponse = z.infer<typeof MCPServerPromptsResponse>;
export type MCPServerRefreshBindingRequest = z.infer<typeof MCPServerRefreshBindingRequest>;
export type MCPServerRefreshBindingResponse = z.infer<typeof MCPServerRefreshBindingResponse>;
export type MCPServerRefreshDiscoveryRequest = z.infer<typeof MCPServerRefreshDiscoveryRequest>;
export type MCPServerRefreshDiscoveryResponse = z.infer<typeof MCPServerRefreshDiscoveryResponse>;
export type MCPServerResourcesRequest = z.infer<typeof MCPServerResourcesRequest>;
export type MCPServerResourcesResponse = z.infer<typeof MCPServerResourcesResponse>;
export type MCPServerRevokeBindingRequest = z.infer<typeof MCPServerRevokeBindingRequest>;
export type MCPServerRevokeBindingResponse = z.infer<typeof MCPServerRevokeBindingResponse>;
export type MCPServerSetRawHTMLTrustRequest = z.infer<typeof MCPServerSetRawHTMLTrustRequest>;
export type MCPServerSetRawHTMLTrustResponse = z.infer<typeof MCPServerSetRawHTMLTrustResponse>;
export type MCPAppCallToolRequest = z.infer<typeof MCPAppCallToolRequest>;
export type MCPAppCallToolResponse = z.infer<typeof MCPAppCallToolResponse>;
