import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isServiceError, ServiceError } from '@ars/contracts';
import type { AuthRequiredServer } from '@ars/contracts';
import type { ServerConnection } from './connection.ts';
import { askedForOAuth, reachServer } from './oauth-access.ts';
import type { ReachDeps, Reached } from './oauth-access.ts';
import type { Opener } from './pool.ts';
import type { LocatedServer } from './server-view.ts';

/**
 * How the public `mcp.servers.*` methods reach a server for their caller:
 * through the OAuth gate, as `_mcp.call_tool` does. An OAuth-bound server
 * is reached with the connection of the caller's binding (the one the
 * caller's identity and the connection's `binding_scope` name: the tenant's,
 * the caller's user's, or the caller's session's grant), when it is usable;
 * another server with its plain connection. Without a usable grant, the
 * methods answer in their own documented way, not as a failure of ours:
 * `health` says `auth_required`, `probe` says `ok: false` with error
 * `auth_required`, `policy` leaves `allowed_tools` out, and `prompts`,
 * `resources`, `read_resource` and `refresh_discovery` refuse 409
 * `conflict`: the caller must authorize first (a run's `_oauth.begin`).
 * A provider's credential broker refusing the caller's binding is answered
 * the same way; a grant or broker that cannot be read now is 503.
 */

/** Whom a public method reaches the server for. */
export interface ServerCaller {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  /** The run the caller names (`read_resource`), else ''. */
  readonly run: string;
}

/** The caller's way to a server. */
export interface CallerReach {
  readonly reached: Reached;
  /**
   * After a use of the reached connection failed: the server's
   * `auth_required` entry when it turns out to ask for OAuth (a plain
   * connection answered 401; it is then dropped), else undefined.
   */
  askedForOAuth(): Promise<AuthRequiredServer | undefined>;
}

/** Reaches `located` for `caller` (the connection is created, not opened). */
export async function reachForCaller(
  deps: ReachDeps,
  caller: ServerCaller,
  located: LocatedServer,
): Promise<CallerReach> {
  const { agent, spec } = located;
  const opener: Opener = { author: { ...caller }, revision_id: agent.revision_id };
  const reached = await reachServer(deps, caller.tenant, agent, spec, opener);
  return {
    reached,
    askedForOAuth: async () =>
      reached.kind === 'connection' ? askedForOAuth(deps, agent, spec, reached, opener) : undefined,
  };
}

/** The words of an `auth_required` answer. */
export function authorizeFirst(server: AuthRequiredServer): string {
  return (
    `MCP server ${server.server_id} is OAuth-bound and the caller's ${server.binding_scope} binding has no usable ` +
    `grant (${server.reason}): the caller must authorize first`
  );
}

/** `health` of a server the caller cannot reach: `auth_required` without a usable grant, else `down`. */
export function unreachedHealth(reached: Exclude<Reached, { kind: 'connection' }>): {
  health: 'auth_required' | 'down';
  error: string;
} {
  if (reached.kind === 'auth_required') return { health: 'auth_required', error: authorizeFirst(reached.server) };
  return { health: reached.refused ? 'auth_required' : 'down', error: reached.failure.reason };
}

/** `probe`'s error of a server the caller cannot reach: `auth_required` without a usable grant, else why. */
export function unreachedProbeError(reached: Exclude<Reached, { kind: 'connection' }>): string {
  return reached.kind === 'auth_required' || reached.refused ? 'auth_required' : reached.failure.reason;
}

/** A read's refusal of a server the caller cannot reach: 409 `conflict` without a usable grant, else 503. */
export function unreachedRefusal(reached: Exclude<Reached, { kind: 'connection' }>): ServiceError {
  if (reached.kind === 'auth_required') return new ServiceError('conflict', authorizeFirst(reached.server));
  const message = `MCP server ${reached.failure.server_id}: ${reached.failure.reason}`;
  return new ServiceError(reached.refused ? 'conflict' : 'unavailable', message);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A failed MCP request of a public read, as its answer. */
export function readFailure(serverId: string, error: unknown): ServiceError {
  if (isServiceError(error)) return error;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout)
      return new ServiceError('timeout', `MCP server ${serverId} did not answer in time`);
    if (error.code === ErrorCode.InvalidParams || error.code === -32002) {
      return new ServiceError('not_found', `MCP server ${serverId}: ${error.message}`);
    }
  }
  return new ServiceError('unavailable', `MCP server ${serverId} failed: ${errorText(error)}`, { cause: error });
}

/**
 * `use` of the caller's connection; refusals as the module comment says,
 * and a failure of `use` as {@link readFailure} answers it (409 when the
 * server turns out to ask for OAuth).
 */
export async function readWith<T>(reach: CallerReach, use: (connection: ServerConnection) => Promise<T>): Promise<T> {
  const { reached } = reach;
  if (reached.kind !== 'connection') throw unreachedRefusal(reached);
  try {
    return await use(reached.connection);
  } catch (error) {
    const server = await reach.askedForOAuth();
    if (server !== undefined) throw new ServiceError('conflict', authorizeFirst(server));
    throw readFailure(reached.connection.serverId, error);
  }
}
