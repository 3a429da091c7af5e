import { z } from 'zod';
import { Timestamp, record } from './common.ts';

/** MCP transports. */
export const McpTransport = z.enum(['stdio', 'streamable_http', 'sse']);
export type McpTransport = z.infer<typeof McpTransport>;

/** An MCP server known to the registry. */
export const McpServer = record({
  server_id: z.string(),
  name: z.string(),
  transport: z.string(),
  url: z.string().optional(),
  state: z.string().describe('added | pending | auth_required | failed | paused | …'),
  agent_id: z.string().optional(),
  raw_html_trusted: z.boolean(),
  tool_count: z.int().nonnegative().optional(),
  last_discovery_at: Timestamp.optional(),
});
export type McpServer = z.infer<typeof McpServer>;

/** A credential binding of an MCP server at a binding scope. */
export const McpBinding = record({
  binding_id: z.string(),
  server_id: z.string(),
  binding_scope: z.string().describe('tenant | user | session'),
  tenant: z.string(),
  user: z.string().optional(),
  session: z.string().optional(),
  state: z.string().describe('active | expired | revoked | pending'),
  scopes: z.array(z.string()).optional(),
  expires_at: Timestamp.optional(),
  agent_id: z.string().optional().describe('the agent whose connection the binding serves'),
  provider_name: z.string().optional().describe("the connection's OAuth provider; the server id when discovered"),
  refreshable: z.boolean().optional().describe('a refresh token is held'),
  updated_at: Timestamp.optional(),
});
export type McpBinding = z.infer<typeof McpBinding>;
