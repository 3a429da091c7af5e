/**
 * The MCP host of agent-registry: live MCP client connections for the
 * agents' `mcp_connections`, their discovery, health and calls. This file is
 * the folder's surface; the tools.* handlers and `_tools.catalogue` import
 * from here only.
 */
export { createMcpHost, resultBound } from './mcp-host.ts';
export type { McpHost, McpHostDeps } from './mcp-host.ts';
export type { AgentMcpTools, TenantMcpTools, ToolHost, UnavailableServer } from './tool-host.ts';
export { DEFAULT_APPROVAL_POLICY, exposedToolName, sideEffectOf } from './naming.ts';
