import { isServiceError, MCP_CALL_TOOL, refuse } from '@ars/contracts';
import type { AuthRequiredServer, McpConnection, ServiceError, ToolsCatalogueReply } from '@ars/contracts';
import type { AgentServers } from './agent-servers.ts';
import type { ServerConnection } from './connection.ts';
import { OPEN_ACCESS } from './oauth-gate.ts';
import type { OAuthGate } from './oauth-gate.ts';
import type { ConnectionPool, Opener } from './pool.ts';

/**
 * The tool host's way to a server through the OAuth gate: the connection of
 * the run's binding for an OAuth-bound server (its key names the binding),
 * the plain connection otherwise, or why there is none (`auth_required`, or
 * the grant cannot be read now). A plain connection that fails to open may
 * meet a server that wants OAuth (answered 401): then it is dropped and the
 * server is `auth_required` too.
 */

/**
 * What reaching a server gave. `unavailable`'s failure is the catalogue's
 * entry: state `auth_unavailable` (the grant cannot be read now) or
 * `auth_refused` (`refused`: the provider's credential broker refused the binding).
 */
export type Reached =
  | { readonly kind: 'connection'; readonly connection: ServerConnection; readonly bound: boolean }
  | { readonly kind: 'auth_required'; readonly server: AuthRequiredServer }
  | {
      readonly kind: 'unavailable';
      readonly failure: ToolsCatalogueReply['unavailable_servers'][number];
      readonly refused: boolean;
    };

/** What reaching reads. */
export interface ReachDeps {
  readonly pool: ConnectionPool;
  /** Absent: no server is OAuth-bound (every connection opens without a token). */
  readonly oauth?: OAuthGate;
}

/** The connection of `spec` of `agent` for the run `opener.author` names, or why there is none. */
export async function reachServer(
  deps: ReachDeps,
  tenant: string,
  agent: AgentServers,
  spec: McpConnection,
  opener: Opener,
): Promise<Reached> {
  const access = deps.oauth === undefined ? OPEN_ACCESS : await deps.oauth.access(opener.author, agent, spec);
  if (access.kind === 'auth_required') return access;
  if (access.kind === 'unavailable') {
    const refused = access.refused === true;
    const state = refused ? 'auth_refused' : 'auth_unavailable';
    return { kind: 'unavailable', failure: { server_id: spec.server_id, state, reason: access.reason }, refused };
  }
  const binding = access.kind === 'bound' ? access.binding : undefined;
  const connection = deps.pool.connection(tenant, agent.agent_id, spec, opener, binding);
  return { kind: 'connection', connection, bound: binding !== undefined };
}

/**
 * After `reached`'s connection failed: when it carried no grant, its open
 * was answered HTTP 401 and its server asks for OAuth (the gate probes it
 * for resource metadata), the connection is dropped and the server's
 * `auth_required` entry answered; otherwise undefined (a server that is
 * down or hangs is never probed).
 */
export async function askedForOAuth(
  deps: ReachDeps,
  agent: AgentServers,
  spec: McpConnection,
  reached: Extract<Reached, { kind: 'connection' }>,
  opener: Opener,
): Promise<AuthRequiredServer | undefined> {
  if (deps.oauth === undefined || reached.bound || !reached.connection.unauthorized) return undefined;
  const server = await deps.oauth.unauthorized(opener.author, agent, spec);
  if (server !== undefined) await deps.pool.drop(reached.connection);
  return server;
}

/**
 * `_mcp.call_tool`'s refusal of a server the run cannot reach now: no
 * usable grant, or a credential broker's refusal, is `auth_required`
 * (permanent); a grant that cannot be read now is `server_unavailable`.
 */
export function unreachable(reached: Exclude<Reached, { kind: 'connection' }>): ServiceError {
  if (reached.kind === 'auth_required') {
    const { server_id: serverId, reason } = reached.server;
    return refuse(
      MCP_CALL_TOOL,
      'auth_required',
      `MCP server ${serverId} needs authorization (${reason}): use _oauth.begin`,
    );
  }
  if (reached.refused) {
    return refuse(MCP_CALL_TOOL, 'auth_required', `MCP server ${reached.failure.server_id}: ${reached.failure.reason}`);
  }
  return refuse(
    MCP_CALL_TOOL,
    'server_unavailable',
    `MCP server ${reached.failure.server_id}: ${reached.failure.reason}`,
  );
}

/**
 * The error a failed call answers: `auth_required` when its connection
 * carried no grant, could not open, and the server asks for OAuth; else `error`.
 */
export async function callFailure(
  deps: ReachDeps,
  agent: AgentServers,
  spec: McpConnection,
  reached: Extract<Reached, { kind: 'connection' }>,
  opener: Opener,
  error: unknown,
): Promise<unknown> {
  const notConnected = isServiceError(error) && error.reason === 'server_unavailable';
  if (!notConnected || reached.connection.state === 'connected') return error;
  const server = await askedForOAuth(deps, agent, spec, reached, opener);
  return server === undefined ? error : unreachable({ kind: 'auth_required', server });
}
