import { MCP_CALL_TOOL, MCP_CANCEL_CALL } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { requireOwnRun } from '../handlers/effective-config.handler.ts';
import type { ToolHost } from './tool-host.ts';

/**
 * `_mcp.call_tool` and `_mcp.cancel_call`, for the run engine. The body's
 * triple must be the calling identity's (the run owner's) unless the caller
 * holds `admin` (403 `scope_mismatch`), as for `_agent.effective_config`.
 * A cancel reaches only the tenant's own calls in flight on this replica.
 */
export function createMcpInternalHandlers(host: ToolHost): InternalHandler[] {
  return [
    serveInternal(MCP_CALL_TOOL, async ({ identity, body }) => {
      requireOwnRun(identity, body, MCP_CALL_TOOL.name);
      return host.callTool(body);
    }),
    serveInternal(MCP_CANCEL_CALL, async ({ identity, body }) => {
      requireOwnRun(identity, body, MCP_CANCEL_CALL.name);
      return { cancelled: host.cancelCall(body.tenant, body.call_id) };
    }),
  ];
}
