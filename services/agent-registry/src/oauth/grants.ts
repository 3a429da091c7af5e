import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ServiceError } from '@ars/contracts';
import type { IdentityQuad } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import { AuthorizationRefused, refreshGrant, revokeAtServer, tokenEndpointHost } from './authorization-server.ts';
import type { OAuthClientInformationMixed, OAuthTokens } from './authorization-server.ts';
import type {
  BindingRecord,
  BindingRepository,
  StoredAuthorizationServer,
  StoredClient,
  UnusableReason,
} from './binding.repository.ts';
import type { OAuthEvents } from './events.ts';
import { grantContext } from './sealer.ts';
import type { Sealer } from './sealer.ts';
import { audienceVerified } from './token-audience.ts';

/**
 * The grants of OAuth-bound servers at use: which binding is usable, its
 * access token (opened through governance once per grant generation and kept
 * in memory, never logged), refresh shortly before expiry (one refresh per
 * binding at a time on this replica; across replicas the record's
 * generation decides which refresh is kept), and a binding turning unusable
 * (expired, refresh failed, revoked), which closes its connections.
 */

/** A binding that cannot be used now, and why (`auth_required`'s reason). */
export class GrantUnusable extends Error {
  readonly reason: UnusableReason;
  constructor(reason: UnusableReason, message: string) {
    super(message);
    this.name = 'GrantUnusable';
    this.reason = reason;
  }
}

/** What the grants work with. */
export interface GrantsDeps {
  readonly bindings: BindingRepository;
  readonly sealer: Sealer;
  readonly events: OAuthEvents;
  readonly logger: Logger;
  /** A grant expiring within this is refreshed before use, in ms. */
  readonly refreshMarginMs: number;
  readonly fetchFn: FetchLike;
  /** Epoch ms now. @default Date.now */
  readonly now?: () => number;
}

/** What a code exchange or refresh stores. */
export interface GrantSource {
  readonly server: StoredAuthorizationServer;
  readonly client: StoredClient;
  readonly providerName: string;
  /** The scopes asked for (kept when the answer names none). */
  readonly requested: readonly string[];
}

/** The grants as the gate, the flows and the binding methods use them. */
export interface Grants {
  /** Why `record` cannot be used now, or undefined when it can (an expired one with a refresh token can). */
  unusable(record: BindingRecord | null): UnusableReason | undefined;
  /** The active binding, refreshed first when due; throws {@link GrantUnusable}. `actor` is who uses it (events). */
  fresh(bindingId: string, actor: IdentityQuad): Promise<BindingRecord>;
  /** The access token of the active binding (fresh); throws {@link GrantUnusable}. */
  accessToken(bindingId: string, actor: IdentityQuad): Promise<string>;
  /**
   * Refreshes now; throws {@link GrantUnusable} when the binding is not
   * active or the server refused (then the binding is `expired`,
   * `refresh_failed`), or `NoRefreshToken`. A server that does not answer
   * leaves a token that has not expired in use; `strict` (an admin's
   * refresh) answers 503 `unavailable` instead.
   */
  refresh(bindingId: string, actor: IdentityQuad, options?: { readonly strict?: boolean }): Promise<BindingRecord>;
  /** Seals and stores tokens from a code exchange; publishes `tool.credential_exchanged` for `actor`. */
  store(bindingId: string, tokens: OAuthTokens, source: GrantSource, actor: IdentityQuad): Promise<BindingRecord>;
  /** The server refused the token `bindingId`'s connection sent (401): refresh, else the binding expires. */
  rejected(bindingId: string, actor: IdentityQuad): Promise<'refreshed'>;
  /**
   * Revokes the binding: forgets its tokens (state `revoked`), asks the
   * authorization server to revoke them (RFC 7009) when it can, closes its
   * connections. Answers whether the server was told.
   */
  revoke(bindingId: string, actor: IdentityQuad): Promise<{ record: BindingRecord | null; serverTold: boolean }>;
  /** The client a binding's grant was obtained with, its secret opened. */
  clientOf(
    record: Pick<BindingRecord, '_id' | 'tenant'> & { client?: StoredClient },
  ): Promise<OAuthClientInformationMixed>;
  /** Closes the binding's connections (re-authorized: they reopen with the new grant). */
  reset(bindingId: string): void;
  /** Tells `listener` of every binding whose connections must close. */
  onClosed(listener: (bindingId: string) => void): void;
}

/** A binding without a refresh token was asked to refresh (`mcp.servers.refresh_binding`: 409). */
export class NoRefreshToken extends Error {
  constructor(bindingId: string) {
    super(`binding ${bindingId} holds no refresh token`);
    this.name = 'NoRefreshToken';
  }
}

const expiryMs = (record: BindingRecord) =>
  record.expires_at === undefined ? undefined : Date.parse(record.expires_at);

/** Creates the grants. */
export function createGrants(deps: GrantsDeps): Grants {
  const now = deps.now ?? Date.now;
  const tokens = new Map<string, { generation: number; token: string }>();
  const refreshing = new Map<string, Promise<BindingRecord>>();
  const listeners: ((bindingId: string) => void)[] = [];
  const grant = (record: Pick<BindingRecord, '_id' | 'tenant'>, slot: 'access' | 'refresh' | 'client') => ({
    tenant: record.tenant,
    purpose: 'oauth_grant' as const,
    context: grantContext(record._id, slot),
  });

  function closed(bindingId: string): void {
    tokens.delete(bindingId);
    for (const listener of listeners) listener(bindingId);
  }

  function unusable(record: BindingRecord | null): UnusableReason | undefined {
    if (record === null || record.state === 'pending') return 'no_grant';
    if (record.state === 'revoked') return 'revoked';
    if (record.state === 'expired') return record.reason ?? 'expired';
    const expires = expiryMs(record);
    if (expires !== undefined && expires <= now() && record.refresh === undefined) return 'expired';
    return undefined;
  }

  async function expire(record: BindingRecord, reason: UnusableReason, actor: IdentityQuad): Promise<never> {
    const marked = await deps.bindings.markUnusable(record._id, 'expired', reason, record.generation);
    if (marked !== null) {
      closed(record._id);
      await deps.events.authRequired(actor, marked, { reason });
      deps.logger.info({ binding_id: record._id, server_id: record.server_id, reason }, 'oauth binding expired');
    }
    throw new GrantUnusable(reason, `the grant of binding ${record._id} expired (${reason})`);
  }

  async function clientOf(record: Pick<BindingRecord, '_id' | 'tenant'> & { client?: StoredClient }) {
    const client = record.client;
    if (client === undefined) throw new GrantUnusable('no_grant', `binding ${record._id} has no client`);
    const secret =
      client.client_secret === undefined
        ? undefined
        : await deps.sealer.open(grant(record, 'client'), client.client_secret);
    return { client_id: client.client_id, ...(secret === undefined ? {} : { client_secret: secret }) };
  }

  async function store(
    bindingId: string,
    answer: OAuthTokens,
    source: GrantSource,
    actor: IdentityQuad,
    generation?: number,
  ) {
    const where = { _id: bindingId, tenant: actor.tenant };
    const [access, refresh] = await Promise.all([
      deps.sealer.seal(grant(where, 'access'), answer.access_token),
      answer.refresh_token === undefined ? undefined : deps.sealer.seal(grant(where, 'refresh'), answer.refresh_token),
    ]);
    const granted = answer.scope?.split(' ').filter((s) => s !== '') ?? [...source.requested];
    const written = await deps.bindings.writeGrant(
      bindingId,
      {
        provider_name: source.providerName,
        scopes: granted,
        ...(answer.expires_in === undefined
          ? {}
          : { expires_at: new Date(now() + answer.expires_in * 1_000).toISOString() }),
        access,
        ...(refresh === undefined ? {} : { refresh }),
        authorization_server: source.server,
        client: source.client,
        audience_verified: audienceVerified(answer.access_token, source.server.resource),
      },
      generation,
    );
    if (written === null) return null;
    tokens.set(bindingId, { generation: written.generation, token: answer.access_token });
    await deps.events.credentialExchanged(actor, written, tokenEndpointHost(source.server));
    return written;
  }

  async function refreshOnce(bindingId: string, actor: IdentityQuad, strict: boolean): Promise<BindingRecord> {
    const record = await deps.bindings.get(bindingId);
    const reason = record?.state === 'active' ? undefined : unusable(record);
    if (record === null || reason !== undefined)
      throw new GrantUnusable(reason ?? 'no_grant', `binding ${bindingId} is not active`);
    if (record.refresh === undefined || record.authorization_server === undefined) throw new NoRefreshToken(bindingId);
    const server = record.authorization_server;
    const refreshToken = await deps.sealer.open(grant(record, 'refresh'), record.refresh);
    let answer: OAuthTokens;
    try {
      answer = await refreshGrant(server, await clientOf(record), refreshToken, deps.fetchFn);
    } catch (error) {
      const moved = await deps.bindings.get(bindingId);
      // Another replica refreshed meanwhile (the server rotated the refresh token we held).
      if (moved !== null && moved.generation !== record.generation && moved.state === 'active') return moved;
      const expires = expiryMs(record);
      if (!(error instanceof AuthorizationRefused) && (expires === undefined || expires > now())) {
        const reason = (error as Error).message;
        deps.logger.warn({ binding_id: bindingId, reason }, 'oauth refresh failed; token still valid');
        if (strict)
          throw new ServiceError('unavailable', `the authorization server did not answer the refresh: ${reason}`);
        return record;
      }
      deps.logger.warn({ binding_id: bindingId, reason: (error as Error).message }, 'oauth refresh failed');
      return expire(record, 'refresh_failed', actor);
    }
    const source = {
      server,
      client: record.client as StoredClient,
      providerName: record.provider_name,
      requested: record.scopes,
    };
    return (
      (await store(bindingId, answer, source, actor, record.generation)) ??
      ((await deps.bindings.get(bindingId)) as BindingRecord)
    );
  }

  function refresh(bindingId: string, actor: IdentityQuad, options: { readonly strict?: boolean } = {}) {
    const running = refreshing.get(bindingId);
    if (running !== undefined) return running;
    const started = refreshOnce(bindingId, actor, options.strict === true).finally(() => refreshing.delete(bindingId));
    refreshing.set(bindingId, started);
    return started;
  }

  async function fresh(bindingId: string, actor: IdentityQuad): Promise<BindingRecord> {
    const record = await deps.bindings.get(bindingId);
    const reason = unusable(record);
    if (record === null || reason !== undefined) {
      throw new GrantUnusable(reason ?? 'no_grant', `binding ${bindingId} has no usable grant (${reason})`);
    }
    const expires = expiryMs(record);
    if (expires === undefined || expires - now() > deps.refreshMarginMs) return record;
    if (record.refresh !== undefined) return refresh(bindingId, actor);
    return expires > now() ? record : expire(record, 'expired', actor);
  }

  return {
    unusable,
    fresh,
    async accessToken(bindingId, actor) {
      const record = await fresh(bindingId, actor);
      const cached = tokens.get(bindingId);
      if (cached !== undefined && cached.generation === record.generation) return cached.token;
      if (record.access === undefined)
        throw new GrantUnusable('no_grant', `binding ${bindingId} holds no access token`);
      const token = await deps.sealer.open(grant(record, 'access'), record.access);
      tokens.set(bindingId, { generation: record.generation, token });
      return token;
    },
    refresh,
    async store(bindingId, answer, source, actor) {
      const written = await store(bindingId, answer, source, actor);
      return written ?? ((await deps.bindings.get(bindingId)) as BindingRecord);
    },
    async rejected(bindingId, actor) {
      tokens.delete(bindingId);
      const record = await deps.bindings.get(bindingId);
      if (record === null || record.state !== 'active') {
        throw new GrantUnusable(unusable(record) ?? 'no_grant', `binding ${bindingId} is not active`);
      }
      if (record.refresh === undefined) return expire(record, 'expired', actor);
      await refresh(bindingId, actor);
      return 'refreshed';
    },
    async revoke(bindingId, actor) {
      const record = await deps.bindings.get(bindingId);
      if (record === null) return { record: null, serverTold: false };
      const held = [
        record.refresh === undefined ? undefined : { sealed: record.refresh, slot: 'refresh' as const },
        record.access === undefined ? undefined : { sealed: record.access, slot: 'access' as const },
      ].filter((t) => t !== undefined);
      const revoked = await deps.bindings.markUnusable(bindingId, 'revoked', 'revoked');
      closed(bindingId);
      let serverTold = false;
      if (record.authorization_server !== undefined && held.length > 0) {
        try {
          const client = await clientOf(record);
          for (const { sealed, slot } of held) {
            const value = await deps.sealer.open(grant(record, slot), sealed);
            const hint = slot === 'refresh' ? 'refresh_token' : 'access_token';
            serverTold =
              (await revokeAtServer(record.authorization_server, client, { value, hint }, deps.fetchFn)) || serverTold;
          }
        } catch (error) {
          // The tokens are forgotten here whatever the server says; it may keep honouring them until they expire.
          deps.logger.warn(
            { binding_id: bindingId, reason: (error as Error).message },
            'oauth revocation at the server failed',
          );
        }
      }
      deps.logger.info(
        { binding_id: bindingId, server_id: record.server_id, actor_user: actor.user, serverTold },
        'oauth binding revoked',
      );
      return { record: revoked, serverTold };
    },
    clientOf,
    reset(bindingId) {
      for (const listener of listeners) listener(bindingId);
    },
    onClosed(listener) {
      listeners.push(listener);
    },
  };
}
