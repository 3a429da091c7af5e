/**
 * The MCP host of agent-registry: live MCP client connections for the
 * agents' `mcp_connections`, their discovery, health and calls. This file is
 * the folder's surface; the tools.* handlers, `_tools.catalogue` and the
 * OAuth module (`oauth/`, which implements the host's {@link OAuthGate})
 * import from here only.
 */
export { createMcpHost, resultBound } from './mcp-host.ts';
export type { McpHost, McpHostDeps } from './mcp-host.ts';
export type { AgentMcpTools, HostedMcpTool, TenantMcpTools, ToolHost, UnavailableServer } from './tool-host.ts';
export { DEFAULT_APPROVAL_POLICY, exposedToolName, sideEffectOf } from './naming.ts';
export { runServers } from './agent-servers.ts';
export type { AgentServerDeps, AgentServers } from './agent-servers.ts';
export type { OAuthGate, PoolBinding, ServerAccess } from './oauth-gate.ts';
