import { MCP_CALL_TOOL, refuse, TOOLS_CATALOGUE } from '@ars/contracts';
import type {
  CatalogueTool,
  IdentityQuad,
  McpCallToolReply,
  McpCallToolRequest,
  McpConnection,
  ToolsCatalogueReply,
  VerifiedIdentity,
} from '@ars/contracts';
import { runServers, tenantServers } from './agent-servers.ts';
import type { AgentServerDeps, AgentServers } from './agent-servers.ts';
import type { CallEntry } from './connection-types.ts';
import { catalogueToolOf, exposedToolName } from './naming.ts';
import type { ConnectionPool } from './pool.ts';

/** A server of the agent whose tools could not be listed now. */
export type UnavailableServer = ToolsCatalogueReply['unavailable_servers'][number];

/**
 * The MCP tools a run of an agent may call: every tool its connected servers
 * list, with the connection's approval policy (default `never`); the
 * tenant's `tools.set_approval_policy` overrides are NOT applied here (the
 * catalogue applies them), nor the agent's `tool_exposure`.
 */
export interface AgentMcpTools {
  readonly agent_id: string;
  readonly tools: CatalogueTool[];
  readonly unavailable_servers: UnavailableServer[];
}

/** The MCP tools of every agent of a tenant (for tools.list / get / describe). */
export interface TenantMcpTools {
  /** One entry per live agent that has MCP connections, by agent id. */
  readonly agents: AgentMcpTools[];
}

/** The tool host as the tools.* handlers and the internal endpoints see it. */
export interface ToolHost {
  /**
   * The MCP tools of `agentId` (absent: the default agent) for a run of
   * `identity` (the run owner's identity): the agent's connections as
   * `_agent.effective_config` resolves them for that identity. Opens the
   * connections lazily and waits for their first discovery (at most
   * MCP_CONNECT_TIMEOUT_MS, all servers at once); a server that cannot be
   * listed lands in `unavailable_servers`. Throws
   * `refuse(TOOLS_CATALOGUE, 'unknown_agent', …)` for an agent the tenant
   * cannot start.
   */
  listAgentMcpTools(identity: VerifiedIdentity, agentId?: string): Promise<AgentMcpTools>;
  /** The MCP tools of every live agent (head revisions) of `tenant`, opening their connections likewise. */
  listTenantMcpTools(identity: VerifiedIdentity, tenant: string): Promise<TenantMcpTools>;
  /** One call (`_mcp.call_tool`); refusals are `refuse(MCP_CALL_TOOL, …)`. The body triple is the caller's to check. */
  callTool(request: McpCallToolRequest): Promise<McpCallToolReply>;
  /** Hard cancel of `tenant`'s call in flight (`_mcp.cancel_call`); false when none is in flight here. */
  cancelCall(tenant: string, callId: string): boolean;
  /** Closes every connection (and kills stdio servers). */
  close(): Promise<void>;
}

/** What the tool host reads and holds. */
export interface ToolHostDeps extends AgentServerDeps {
  readonly pool: ConnectionPool;
}

function quadOf(identity: { tenant: string; user: string; session: string }, run = ''): IdentityQuad {
  return { tenant: identity.tenant, user: identity.user, session: identity.session, run };
}

async function toolsOfAgent(deps: ToolHostDeps, tenant: string, author: IdentityQuad, agent: AgentServers) {
  const opener = { author, revision_id: agent.revision_id };
  const listed = await Promise.all(
    agent.connections.map(async (spec: McpConnection) => {
      const connection = deps.pool.connection(tenant, agent.agent_id, spec, opener);
      try {
        await connection.ready();
        return { spec, tools: connection.tools, failure: undefined };
      } catch (error) {
        const reason = connection.health().last_error ?? (error instanceof Error ? error.message : String(error));
        return { spec, tools: [], failure: { server_id: spec.server_id, state: connection.state, reason } };
      }
    }),
  );
  const result: AgentMcpTools = { agent_id: agent.agent_id, tools: [], unavailable_servers: [] };
  for (const { spec, tools, failure } of listed) {
    if (failure !== undefined) result.unavailable_servers.push(failure);
    for (const tool of tools) {
      const entry = catalogueToolOf(spec, tool);
      if (entry !== null) result.tools.push(entry);
    }
  }
  return result;
}

/** The tool host over `deps.pool`. */
export function createToolHost(deps: ToolHostDeps): ToolHost {
  /** Calls in flight by tenant and call id (a repeated id names every call that carries it). */
  const inFlight = new Map<string, Set<CallEntry>>();
  const callKey = (tenant: string, callId: string) => `${tenant}\u0000${callId}`;

  async function callTool(request: McpCallToolRequest): Promise<McpCallToolReply> {
    const agentId = request.agent_id ?? deps.defaultAgentId;
    const servers = await runServers(deps, request, agentId);
    if (servers === null)
      throw refuse(MCP_CALL_TOOL, 'unknown_agent', `agent_id ${agentId} names no agent configuration`);
    const spec = servers.connections.find((c) => c.server_id === request.server_id);
    if (spec === undefined || exposedToolName(request.server_id, request.tool) === null) {
      throw refuse(
        MCP_CALL_TOOL,
        'unknown_tool',
        `agent ${agentId} has no MCP tool ${request.server_id}/${request.tool}`,
      );
    }
    const opener = { author: quadOf(request, request.run), revision_id: servers.revision_id };
    const connection = deps.pool.connection(request.tenant, agentId, spec, opener);
    const entry: CallEntry = { controller: new AbortController() };
    const key = callKey(request.tenant, request.call_id);
    const entries = inFlight.get(key) ?? new Set<CallEntry>();
    entries.add(entry);
    inFlight.set(key, entries);
    try {
      return await connection.callTool({
        tool: request.tool,
        arguments: request.arguments,
        timeoutMs: request.timeout_ms,
        entry,
      });
    } finally {
      entries.delete(entry);
      if (entries.size === 0 && inFlight.get(key) === entries) inFlight.delete(key);
    }
  }

  return {
    async listAgentMcpTools(identity, agentId = deps.defaultAgentId) {
      const servers = await runServers(deps, identity, agentId);
      if (servers === null) {
        throw refuse(TOOLS_CATALOGUE, 'unknown_agent', `agent_id ${agentId} names no agent configuration`);
      }
      return toolsOfAgent(deps, identity.tenant, quadOf(identity), servers);
    },
    async listTenantMcpTools(identity, tenant) {
      const agents = await tenantServers(deps, tenant);
      const author = quadOf({ ...identity, tenant });
      return { agents: await Promise.all(agents.map((a) => toolsOfAgent(deps, tenant, author, a))) };
    },
    callTool,
    cancelCall(tenant, callId) {
      const entries = inFlight.get(callKey(tenant, callId));
      if (entries === undefined || entries.size === 0) return false;
      for (const entry of entries) {
        entry.aborted ??= 'cancelled';
        entry.controller.abort();
      }
      return true;
    },
    close: () => deps.pool.close(),
  };
}
