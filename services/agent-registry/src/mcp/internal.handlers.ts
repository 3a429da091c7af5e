import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { broadcastSubject, publishBroadcast, subscribeBroadcast } from '@ars/bus';
import type { Bus, Subscription } from '@ars/bus';
import { MCP_CALL_TOOL, MCP_CANCEL_CALL } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { requireOwnRun } from '../handlers/effective-config.handler.ts';
import type { ToolHost } from './tool-host.ts';

/**
 * `_mcp.call_tool` and `_mcp.cancel_call`, for the run engine. The body's
 * triple must be the calling identity's (the run owner's) unless the caller
 * holds `admin` (403 `scope_mismatch`), as for `_agent.effective_config`.
 * A cancel reaches only the tenant's own calls. The replica the request
 * reaches (the queue group picks one) cancels the call if it holds it, and
 * otherwise broadcasts the cancel to every replica, since the call may be in
 * flight on another; `cancelled` says whether this replica held it.
 */
export function createMcpInternalHandlers(host: ToolHost, bus: Bus, replica: string): InternalHandler[] {
  return [
    serveInternal(MCP_CALL_TOOL, async ({ identity, body }) => {
      requireOwnRun(identity, body, MCP_CALL_TOOL.name);
      return host.callTool(body);
    }),
    serveInternal(MCP_CANCEL_CALL, async ({ identity, body }) => {
      requireOwnRun(identity, body, MCP_CANCEL_CALL.name);
      const cancelled = host.cancelCall(body.tenant, body.call_id);
      if (!cancelled) publishBroadcast(bus, CANCEL_BROADCAST, { tenant: body.tenant, call_id: body.call_id, from: replica });
      return { cancelled };
    }),
  ];
}

/** Where a cancel the receiving replica could not apply goes to every replica. */
export const CANCEL_BROADCAST = broadcastSubject('agent-registry', 'mcp_cancel');

const CancelBroadcast = z.object({ tenant: z.string().min(1), call_id: z.string().min(1), from: z.string() });

/** A replica's name in its cancel broadcasts. */
export function newReplicaId(): string {
  return randomUUID();
}

/**
 * Applies the cancels other replicas broadcast to the calls in flight here.
 * A replica's own broadcast is skipped: it already looked, and applying it
 * later would cancel a call that started after the cancel was answered.
 */
export function listenForCancels(host: ToolHost, bus: Bus, replica: string): Subscription {
  return subscribeBroadcast(bus, CANCEL_BROADCAST, (body) => {
    const parsed = CancelBroadcast.safeParse(body);
    if (parsed.success && parsed.data.from !== replica) host.cancelCall(parsed.data.tenant, parsed.data.call_id);
  });
}
