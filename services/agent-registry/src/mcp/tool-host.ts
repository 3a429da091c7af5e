import { MCP_CALL_TOOL, refuse, TOOLS_CATALOGUE } from '@ars/contracts';
import type {
  AuthRequiredServer,
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
import type { AppCalls } from './app-calls.ts';
import { visibleToModel } from './apps.ts';
import type { CallResults } from './call-results.ts';
import type { ServerConnection } from './connection.ts';
import type { CallEntry } from './connection-types.ts';
import { withDeadline } from './deadline.ts';
import { catalogueToolOf, exposedToolName } from './naming.ts';
import { askedForOAuth, callFailure, reachServer, unreachable } from './oauth-access.ts';
import type { OAuthGate } from './oauth-gate.ts';
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
  readonly tools: HostedMcpTool[];
  readonly unavailable_servers: UnavailableServer[];
  /** OAuth-bound servers without a usable grant for the run's binding scope (not opened; their tools left out). */
  readonly auth_required?: AuthRequiredServer[];
}

/**
 * An MCP tool of the host: its catalogue entry (with the server's
 * `outputSchema`) and, for a server bound to an OAuth provider, the provider
 * and scopes the agent's configuration names (`tools.describe`; not sent to
 * runs). Tools only an app may call (`_meta.ui.visibility` without `model`)
 * are not listed.
 */
export type HostedMcpTool = CatalogueTool & {
  readonly oauth?: { readonly provider_name: string; readonly scopes: readonly string[] };
};

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
  /**
   * The connection of `serverId` of `agentId` as a run of `owner` has it
   * (created, not yet opened, on first ask), for an app's calls and reads on
   * behalf of that run's user; null when the agent no longer has the server.
   */
  appConnection(owner: IdentityQuad, agentId: string, serverId: string): Promise<ServerConnection | null>;
  /** Hard cancel of `tenant`'s call in flight (`_mcp.cancel_call`); false when none is in flight here. */
  cancelCall(tenant: string, callId: string): boolean;
  /** Closes every connection (and kills stdio servers). */
  close(): Promise<void>;
}

/** What the tool host reads and holds. */
export interface ToolHostDeps extends AgentServerDeps {
  readonly pool: ConnectionPool;
  /** Offloads large results and bounds what is forwarded; absent: replies as the connection bounds them. */
  readonly results?: CallResults;
  /** Records the calls of app tools (`mcp.app_available`); absent: nothing recorded. */
  readonly apps?: AppCalls;
  /** Reaches OAuth-bound servers with the run's grant; absent: every server opens without a token. */
  readonly oauth?: OAuthGate;
}

/**
 * The OAuth provider and scopes of a server: the agent's
 * `oauth_mcp_capabilities` entry for it, else its connection's
 * `oauth_provider` with that provider's configured scopes.
 */
export function oauthOf(agent: AgentServers, spec: McpConnection): HostedMcpTool['oauth'] {
  const capability = agent.oauth_capabilities?.find((c) => c.server_id === spec.server_id);
  if (capability !== undefined) return { provider_name: capability.provider_name, scopes: [...capability.scopes] };
  if (spec.oauth_provider === undefined) return undefined;
  const provider = agent.oauth_providers?.find((p) => p.provider_name === spec.oauth_provider);
  return { provider_name: spec.oauth_provider, scopes: [...(provider?.scopes ?? [])] };
}

/**
 * The server's listing of `tool`, waiting for a connection's first
 * discovery at most `ms` (and not past `signal`); undefined when the
 * server does not list it (the call then refuses it).
 */
async function listedTool(connection: ServerConnection, tool: string, ms: number, signal: AbortSignal) {
  if (connection.discoveredAt === undefined && connection.state !== 'connected') {
    const cancelled = new Promise<never>((_, reject) =>
      signal.addEventListener('abort', () => reject(new Error('cancelled while connecting')), { once: true }),
    );
    cancelled.catch(() => undefined);
    // A failure here is the call's to report: it meets the same connection at once.
    await withDeadline(Promise.race([connection.ready(), cancelled]), ms, 'connect').catch(() => undefined);
  }
  return connection.tools.find((t) => t.name === tool);
}

function quadOf(identity: { tenant: string; user: string; session: string }, run = ''): IdentityQuad {
  return { tenant: identity.tenant, user: identity.user, session: identity.session, run };
}

async function toolsOfAgent(deps: ToolHostDeps, tenant: string, author: IdentityQuad, agent: AgentServers) {
  const opener = { author, revision_id: agent.revision_id };
  const listed = await Promise.all(
    agent.connections.map(async (spec: McpConnection) => {
      const reached = await reachServer(deps, tenant, agent, spec, opener);
      if (reached.kind === 'auth_required') return { spec, tools: [], failure: undefined, auth: reached.server };
      if (reached.kind === 'unavailable') return { spec, tools: [], failure: reached.failure, auth: undefined };
      const { connection } = reached;
      try {
        await connection.ready();
        return { spec, tools: connection.tools, failure: undefined, auth: undefined };
      } catch (error) {
        const auth = await askedForOAuth(deps, agent, spec, reached, opener);
        if (auth !== undefined) return { spec, tools: [], failure: undefined, auth };
        const reason = connection.health().last_error ?? (error instanceof Error ? error.message : String(error));
        const failure = { server_id: spec.server_id, state: connection.state, reason };
        return { spec, tools: [], failure, auth: undefined };
      }
    }),
  );
  const authRequired: AuthRequiredServer[] = [];
  const result: AgentMcpTools = {
    agent_id: agent.agent_id,
    tools: [],
    unavailable_servers: [],
    auth_required: authRequired,
  };
  for (const { spec, tools, failure, auth } of listed) {
    if (failure !== undefined) result.unavailable_servers.push(failure);
    if (auth !== undefined) authRequired.push(auth);
    const oauth = oauthOf(agent, spec);
    for (const tool of tools) {
      const entry = visibleToModel(tool) ? catalogueToolOf(spec, tool) : null;
      if (entry === null) continue;
      result.tools.push({
        ...entry,
        ...(tool.outputSchema === undefined ? {} : { output_schema: tool.outputSchema }),
        ...(oauth === undefined ? {} : { oauth }),
      });
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
    const reached = await reachServer(deps, request.tenant, servers, spec, opener);
    if (reached.kind !== 'connection') throw unreachable(reached);
    const { connection } = reached;
    const entry: CallEntry = { controller: new AbortController() };
    const key = callKey(request.tenant, request.call_id);
    const entries = inFlight.get(key) ?? new Set<CallEntry>();
    entries.add(entry);
    inFlight.set(key, entries);
    try {
      const started = Date.now();
      const listed = await listedTool(connection, request.tool, request.timeout_ms, entry.controller.signal);
      if (entry.aborted === 'cancelled') {
        throw refuse(
          MCP_CALL_TOOL,
          'call_cancelled',
          `${request.server_id}/${request.tool}: cancelled while connecting`,
        );
      }
      if (listed !== undefined && !visibleToModel(listed)) {
        throw refuse(
          MCP_CALL_TOOL,
          'unknown_tool',
          `${request.server_id}/${request.tool} may be called by its app only`,
        );
      }
      const reply = await connection.callTool({
        tool: request.tool,
        arguments: request.arguments,
        timeoutMs: Math.max(1, request.timeout_ms - (Date.now() - started)),
        entry,
      });
      const identity = quadOf(request, request.run);
      const origin = { identity, serverId: request.server_id, label: request.tool };
      const forwarded = deps.results === undefined ? reply : await deps.results.forward(reply, origin);
      if (listed !== undefined) {
        await deps.apps?.answered({
          identity,
          agentId,
          serverId: request.server_id,
          tool: listed,
          callId: request.call_id,
          arguments: request.arguments,
          reply: forwarded,
        });
      }
      return forwarded;
    } catch (error) {
      throw await callFailure(deps, servers, spec, reached, opener, error);
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
    async appConnection(owner, agentId, serverId) {
      const servers = await runServers(deps, owner, agentId);
      const spec = servers?.connections.find((c) => c.server_id === serverId);
      if (servers === null || spec === undefined) return null;
      const reached = await reachServer(deps, owner.tenant, servers, spec, {
        author: owner,
        revision_id: servers.revision_id,
      });
      if (reached.kind !== 'connection') throw unreachable(reached);
      return reached.connection;
    },
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
