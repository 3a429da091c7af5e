import type { SealedSecretView } from '@ars/contracts';
import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Filter, Store } from '@ars/store';
import type { BindingSubject } from './binding-id.ts';

/**
 * The OAuth grants of MCP servers, one record per binding (see
 * `binding-id.ts`). Tokens are kept sealed by governance (the key never
 * leaves it); this repository never sees them in clear. Every write of
 * tokens or state bumps `generation`, so that two replicas refreshing the
 * same grant at once cannot both win.
 */

/** `pending`: authorization started, no grant yet; `active`; `expired` (no refresh possible); `revoked`. */
export type BindingState = 'pending' | 'active' | 'expired' | 'revoked';

/** Why a binding is not usable, as `auth_required` says it. */
export type UnusableReason = 'no_grant' | 'expired' | 'revoked' | 'refresh_failed';

/** The authorization server of a grant, as needed to refresh and revoke it. */
export interface StoredAuthorizationServer {
  /** The URL discovery used (the issuer the SDK binds client and tokens to). */
  readonly url: string;
  /** Its RFC 8414 metadata (endpoints, supported methods). */
  readonly metadata: Record<string, unknown>;
  /** The RFC 8707 resource indicator sent with every token request. */
  readonly resource?: string;
}

/** The OAuth client the grant was obtained with (the provider's, or dynamically registered). */
export interface StoredClient {
  readonly client_id: string;
  /** Sealed (purpose oauth_grant, context `<binding>#client`) when the server issued one. */
  readonly client_secret?: SealedSecretView;
  readonly token_endpoint_auth_method?: string;
  /** Dynamically registered (RFC 7591) for `redirect_uri` at the server `issuer`. */
  readonly registered?: { readonly issuer: string; readonly redirect_uri: string };
}

/** One binding. `_id` is its binding id. */
export interface BindingRecord extends BindingSubject {
  _id: string;
  provider_name: string;
  /** The connection's transport (`mcp.connection.*` events name it). */
  transport?: string;
  state: BindingState;
  /** Why it is expired or revoked. */
  reason?: UnusableReason;
  /** Granted scopes (the token response's `scope`, else what was asked). */
  scopes: string[];
  /** ISO 8601 UTC; absent when the server gave no `expires_in`. */
  expires_at?: string;
  access?: SealedSecretView;
  refresh?: SealedSecretView;
  authorization_server?: StoredAuthorizationServer;
  client?: StoredClient;
  audience_verified?: boolean;
  generation: number;
  created_at: string;
  updated_at: string;
}

/** What a grant write stores. */
export interface GrantWrite {
  readonly provider_name: string;
  readonly scopes: readonly string[];
  readonly expires_at?: string;
  readonly access: SealedSecretView;
  /** Absent: keep the refresh token held (a refresh answer without a new one). */
  readonly refresh?: SealedSecretView;
  readonly authorization_server: StoredAuthorizationServer;
  readonly client: StoredClient;
  readonly audience_verified: boolean;
}

/** The store of bindings. */
export interface BindingRepository {
  get(bindingId: string): Promise<BindingRecord | null>;
  /** The tenant's bindings (of one server, or one agent's server), by id; at most `limit`. */
  ofTenant(
    tenant: string,
    filter?: { server_id?: string; agent_id?: string },
    limit?: number,
  ): Promise<BindingRecord[]>;
  /** Creates the binding `pending` unless it exists; answers the stored record. */
  ensure(bindingId: string, subject: BindingSubject, providerName: string, transport: string): Promise<BindingRecord>;
  /** Stores a grant (state active); with `generation`, only if the record is still at it. Null when it moved. */
  writeGrant(bindingId: string, grant: GrantWrite, generation?: number): Promise<BindingRecord | null>;
  /** Keeps the client a flow registered (reused by the next authorization of the binding). */
  writeClient(bindingId: string, client: StoredClient, server: StoredAuthorizationServer): Promise<void>;
  /**
   * Marks the binding expired or revoked; with `generation`, only if the
   * record is still at it. Revoking forgets the sealed tokens. Null when it moved.
   */
  markUnusable(
    bindingId: string,
    state: 'expired' | 'revoked',
    reason: UnusableReason,
    generation?: number,
  ): Promise<BindingRecord | null>;
}

/** More bindings than this per read is a listing bug somewhere; the read stays bounded. */
export const MAX_BINDINGS_PER_READ = 10_000;

const now = () => new Date().toISOString();

/** The store-backed {@link BindingRepository}; creates its index. */
export async function createBindingRepository(store: Store): Promise<BindingRepository> {
  const bindings: Collection<BindingRecord> = store.collection<BindingRecord>('mcp_oauth_bindings');
  await bindings.createIndex({ tenant: 1, server_id: 1 });

  const at = (bindingId: string, generation?: number): Filter<BindingRecord> =>
    generation === undefined ? { _id: bindingId } : { _id: bindingId, generation };

  return {
    get: (bindingId) => bindings.findOne({ _id: bindingId }),
    ofTenant: (tenant, filter = {}, limit = MAX_BINDINGS_PER_READ) =>
      bindings.find(
        {
          tenant,
          ...(filter.server_id === undefined ? {} : { server_id: filter.server_id }),
          ...(filter.agent_id === undefined ? {} : { agent_id: filter.agent_id }),
        },
        { sort: { _id: 1 }, limit },
      ),
    async ensure(bindingId, subject, providerName, transport) {
      const stamp = now();
      const insert = () =>
        bindings.updateOne(
          { _id: bindingId },
          {
            $setOnInsert: {
              ...subject,
              provider_name: providerName,
              transport,
              state: 'pending',
              scopes: [],
              generation: 0,
              created_at: stamp,
              updated_at: stamp,
            },
          },
          { upsert: true },
        );
      try {
        await insert();
      } catch (error) {
        // Two first begins raced on the upsert: the record exists now.
        if (!isDuplicateKeyError(error)) throw error;
      }
      return (await bindings.findOne({ _id: bindingId })) as BindingRecord;
    },
    async writeGrant(bindingId, grant, generation) {
      const { refresh, ...rest } = grant;
      return bindings.findOneAndUpdate(
        at(bindingId, generation),
        {
          $set: {
            ...rest,
            scopes: [...grant.scopes],
            state: 'active',
            updated_at: now(),
            ...(refresh === undefined ? {} : { refresh }),
          },
          $unset: { reason: true, ...(grant.expires_at === undefined ? { expires_at: true } : {}) },
          $inc: { generation: 1 },
        },
        { returnDocument: 'after' },
      );
    },
    async writeClient(bindingId, client, server) {
      await bindings.updateOne(
        { _id: bindingId },
        { $set: { client, authorization_server: server, updated_at: now() } },
      );
    },
    markUnusable: (bindingId, state, reason, generation) =>
      bindings.findOneAndUpdate(
        at(bindingId, generation),
        {
          $set: { state, reason, updated_at: now() },
          ...(state === 'revoked' ? { $unset: { access: true, refresh: true } } : {}),
          $inc: { generation: 1 },
        },
        { returnDocument: 'after' },
      ),
  };
}
