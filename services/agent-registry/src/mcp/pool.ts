import { contentHash } from '@ars/service-kit';
import type { IdentityQuad, McpConnection } from '@ars/contracts';
import type { EventPublisher } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import { ServerConnection } from './connection.ts';
import type { ConnectionSettings, ConnectionState, LifecycleEvent } from './connection-types.ts';
import type { PoolBinding } from './oauth-gate.ts';

/**
 * The live MCP connections of this replica, one per (tenant, agent id,
 * connection definition, server id, and for an OAuth-bound server the
 * binding whose grant it carries: two users never share a token). The
 * definition's content hash stands
 * for the revision: every revision (and every user variant) that leaves a
 * server's definition unchanged shares its connection, and a changed
 * definition gets a new one while the old one idles out. Idle connections
 * (no call, discovery or read for `idleCloseMs`) are closed by a sweep.
 */

/** Who opened a connection: the author of its `mcp.connection.*` events. */
export interface Opener {
  readonly author: IdentityQuad;
  /** The agent revision the connection was opened for (null: the built-in default). */
  readonly revision_id: string | null;
}

/** What the pool needs. */
export interface PoolDeps {
  readonly settings: ConnectionSettings;
  /** 0: never close for idleness. */
  readonly idleCloseMs: number;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
}

/** A pooled connection with what it was opened for. */
export interface PooledConnection {
  readonly tenant: string;
  readonly agent_id: string;
  readonly opener: Opener;
  readonly connection: ServerConnection;
  /** The OAuth binding whose grant the connection carries. */
  readonly binding_id?: string;
}

/** The pool of this replica's MCP connections. */
export interface ConnectionPool {
  /**
   * The connection for `spec` of `agentId` in `tenant` (carrying `binding`'s
   * grant, for an OAuth-bound server), created (not yet opened) on first ask.
   */
  connection(
    tenant: string,
    agentId: string,
    spec: McpConnection,
    opener: Opener,
    binding?: PoolBinding,
  ): ServerConnection;
  /** The connection if this replica has one (of `bindingId`'s grant, when given). */
  find(tenant: string, agentId: string, spec: McpConnection, bindingId?: string): ServerConnection | undefined;
  /** Closes and forgets every connection carrying `bindingId`'s grant; answers how many. */
  closeBinding(bindingId: string): Promise<number>;
  /** Closes and forgets `connection` (one that turned out to need a grant). */
  drop(connection: ServerConnection): Promise<void>;
  /** Closes connections idle past the limit; answers how many. */
  sweep(at?: number): Promise<number>;
  /** Closes every connection. */
  close(): Promise<void>;
}

/** The pool key: NUL cannot occur in a tenant or an agent id. */
function keyOf(tenant: string, agentId: string, spec: McpConnection, bindingId = ''): string {
  return [tenant, agentId, spec.server_id, contentHash(spec), bindingId].join('\u0000');
}

function lifecyclePublisher(deps: PoolDeps, tenant: string, agentId: string, spec: McpConnection, opener: Opener) {
  return (event: LifecycleEvent, state: ConnectionState, reason: string) => {
    const type = `mcp.connection.${event}`;
    const at = new Date().toISOString();
    const { author } = opener;
    deps.publisher
      .publish({
        type,
        identity: { tenant: author.tenant, user: author.user, session: author.session },
        occurredAt: at,
        payload: {
          Author: author,
          AgentID: agentId,
          ServerID: spec.server_id,
          Transport: spec.transport,
          State: state,
          RevisionID: opener.revision_id ?? '',
          PauseToken: '',
          Reason: reason.slice(0, 2_048),
          OccurredAt: at,
        },
      })
      .catch((error: unknown) => deps.logger.warn({ err: error, type, tenant }, 'mcp connection event not published'));
  };
}

function resourcePublisher(deps: PoolDeps, spec: McpConnection) {
  return (uri: string, subscribers: readonly IdentityQuad[]) => {
    const at = new Date().toISOString();
    for (const subscriber of subscribers) {
      deps.publisher
        .publish({
          type: 'mcp.resource_updated',
          identity: subscriber,
          occurredAt: at,
          payload: { Identity: subscriber, Source: spec.server_id, URI: uri, OccurredAt: at },
        })
        .catch((error: unknown) => deps.logger.warn({ err: error, uri }, 'mcp.resource_updated not published'));
    }
  };
}

/** Creates the pool and starts its idle sweep (unref'd: it never holds the process). */
export function createConnectionPool(deps: PoolDeps): ConnectionPool {
  const pooled = new Map<string, PooledConnection>();
  const sweepEveryMs = Math.min(Math.max(deps.idleCloseMs / 4, 100), 30_000);

  async function sweep(at = Date.now()): Promise<number> {
    if (deps.idleCloseMs <= 0) return 0;
    const idle = [...pooled.entries()].filter(([, p]) => p.connection.idleMs(at) >= deps.idleCloseMs);
    for (const [key] of idle) pooled.delete(key);
    await Promise.all(idle.map(([, p]) => p.connection.close()));
    if (idle.length > 0) deps.logger.info({ closed: idle.length }, 'idle mcp connections closed');
    return idle.length;
  }

  const timer = deps.idleCloseMs > 0 ? setInterval(() => void sweep(), sweepEveryMs) : undefined;
  timer?.unref();

  return {
    connection(tenant, agentId, spec, opener, binding) {
      const key = keyOf(tenant, agentId, spec, binding?.binding_id);
      const existing = pooled.get(key);
      if (existing !== undefined) return existing.connection;
      const logger = deps.logger.child({ tenant, agent_id: agentId, server_id: spec.server_id });
      const connection = new ServerConnection(
        key,
        spec,
        deps.settings,
        {
          onLifecycle: lifecyclePublisher(deps, tenant, agentId, spec, opener),
          onResourceUpdated: resourcePublisher(deps, spec),
        },
        logger,
        binding?.authProvider,
      );
      const bound = binding === undefined ? {} : { binding_id: binding.binding_id };
      pooled.set(key, { tenant, agent_id: agentId, opener, connection, ...bound });
      return connection;
    },
    find: (tenant, agentId, spec, bindingId) => pooled.get(keyOf(tenant, agentId, spec, bindingId))?.connection,
    async closeBinding(bindingId) {
      const bound = [...pooled.entries()].filter(([, p]) => p.binding_id === bindingId);
      for (const [key] of bound) pooled.delete(key);
      await Promise.all(bound.map(([, p]) => p.connection.close()));
      return bound.length;
    },
    async drop(connection) {
      if (pooled.get(connection.key)?.connection === connection) pooled.delete(connection.key);
      await connection.close();
    },
    sweep,
    async close() {
      clearInterval(timer);
      const all = [...pooled.values()];
      pooled.clear();
      await Promise.all(all.map((p) => p.connection.close()));
    },
  };
}
