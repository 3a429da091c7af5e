import { ServiceError } from '@ars/contracts';
import type { McpConnection, McpEgress, McpServer, ToolExposure } from '@ars/contracts';
import { liveAgent } from '../handlers/agent-state.ts';
import type { AgentLookup } from '../handlers/agent-state.ts';
import { tenantServers } from './agent-servers.ts';
import type { AgentServers } from './agent-servers.ts';
import type { ServerConnection } from './connection.ts';

/**
 * The MCP servers of a tenant as the public `mcp.servers.*` methods show
 * them: one per (agent, connection) of the head revisions of the tenant's
 * live agents, with the state of this replica's connection (`configured`
 * while this replica has not opened it).
 */

/** A connection of an agent. */
export interface LocatedServer {
  readonly agent: AgentServers;
  readonly spec: McpConnection;
}

/** Every server of the tenant's agents, sorted by agent id, then server id. */
export async function serversOfTenant(lookup: AgentLookup, tenant: string): Promise<LocatedServer[]> {
  const agents = await tenantServers(lookup, tenant);
  return agents
    .flatMap((agent) => agent.connections.map((spec) => ({ agent, spec })))
    .sort(
      (a, b) => a.agent.agent_id.localeCompare(b.agent.agent_id) || a.spec.server_id.localeCompare(b.spec.server_id),
    );
}

/**
 * The connection `serverId` of `agentId`, or, without an agent id, of the
 * one agent of the tenant that has it: 404 `not_found` when none has, 409
 * `conflict` when several have (name `agent_id`).
 */
export async function locateServer(
  lookup: AgentLookup,
  tenant: string,
  serverId: string,
  agentId: string | undefined,
): Promise<LocatedServer> {
  if (agentId !== undefined) {
    const agent = await liveAgent(lookup, tenant, agentId);
    const spec = agent?.config.mcp_connections?.find((c) => c.server_id === serverId);
    if (agent === null || spec === undefined) {
      throw new ServiceError('not_found', `agent ${agentId} has no MCP server ${serverId}`);
    }
    const servers: AgentServers = {
      agent_id: agentId,
      revision_id: agent.revision_id,
      connections: [spec],
      oauth_providers: agent.config.oauth_providers ?? [],
      oauth_capabilities: agent.config.oauth_mcp_capabilities ?? [],
    };
    return { agent: servers, spec };
  }
  const matches = (await serversOfTenant(lookup, tenant)).filter((s) => s.spec.server_id === serverId);
  if (matches.length === 0) throw new ServiceError('not_found', `no agent of the tenant has an MCP server ${serverId}`);
  if (matches.length > 1) {
    const agents = matches.map((m) => m.agent.agent_id).join(', ');
    throw new ServiceError(
      'conflict',
      `MCP server ${serverId} is configured on several agents (${agents}); name agent_id`,
    );
  }
  return matches[0] as LocatedServer;
}

/**
 * The public record of a server; `connection` is this replica's, when it
 * has one; `rawHtmlTrusted` the tenant's `mcp.servers.set_raw_html_trust`.
 */
export function serverRecord(
  located: LocatedServer,
  connection: ServerConnection | undefined,
  rawHtmlTrusted = false,
): McpServer {
  const { agent, spec } = located;
  const discovered = connection?.discoveredAt;
  const health = connection?.health();
  return {
    server_id: spec.server_id,
    name: spec.server_id,
    transport: spec.transport,
    ...(spec.url === undefined ? {} : { url: spec.url }),
    state: connection?.state ?? 'configured',
    agent_id: agent.agent_id,
    revision_id: agent.revision_id ?? '',
    raw_html_trusted: rawHtmlTrusted,
    ...(discovered === undefined ? {} : { tool_count: connection?.tools.length ?? 0, last_discovery_at: discovered }),
    // Loose members: the transport actually in use (`sse` after a fallback) and the last failure.
    ...(health?.state === 'connected' ? { transport_in_use: health.transport } : {}),
    ...(health?.last_error === undefined ? {} : { last_error: health.last_error }),
  };
}

/** Where a connection's traffic goes (`mcp.servers.policy` egress): the command it runs, or the host it reaches. */
export function egressOf(spec: McpConnection): McpEgress {
  if (spec.transport === 'stdio' || spec.url === undefined) {
    return {
      transport: spec.transport,
      kind: 'process',
      ...(spec.command === undefined ? {} : { command: spec.command }),
    };
  }
  const url = new URL(spec.url);
  return { transport: spec.transport, kind: 'network', scheme: url.protocol.replace(/:$/, ''), host: url.host };
}

/** The exposed names of `tools` a run may see under the agent's `tool_exposure` (absent: all). */
export function allowedTools(exposed: readonly string[], exposure: ToolExposure | undefined): string[] {
  if (exposure === undefined || exposure.mode === 'all') return [...exposed];
  const listed = new Set(exposure.tools);
  return exposed.filter((name) => (exposure.mode === 'allow_list' ? listed.has(name) : !listed.has(name)));
}

/** Items per page of the prompt and resource lists (their requests carry no limit). */
export const DISCOVERY_PAGE_SIZE = 100;

/**
 * One page of an in-memory list: the cursor is the offset of the next item
 * (base64url), valid as long as the list does not change underneath.
 */
export function offsetPage<T>(
  method: string,
  items: readonly T[],
  cursor: string | undefined,
  limit: number,
): { items: T[]; next_cursor?: string } {
  let offset = 0;
  if (cursor !== undefined) {
    const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
    offset = /^o:\d{1,9}$/.test(decoded) ? Number(decoded.slice(2)) : -1;
    if (offset < 0) throw new ServiceError('invalid_request', `${method}: cursor is not a next_cursor of this read`);
  }
  const page = items.slice(offset, offset + limit);
  const next = offset + page.length;
  return next < items.length
    ? { items: page, next_cursor: Buffer.from(`o:${next}`).toString('base64url') }
    : { items: page };
}
