import type { EventPublisher } from '@ars/bus';
import type { IdentityQuad } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import type { BindingRecord, UnusableReason } from './binding.repository.ts';

/**
 * The events of OAuth grants: `tool.credential_exchanged` for every code
 * exchange and refresh, `mcp.connection.auth_required` when a server needs
 * the user to authorize (again); for a provider whose tokens come from an
 * external credential broker, each request sent to it:
 * `tool.provider_credential_fetched` and `tool.credential_exchanged`, or
 * `tool.provider_credential_fetch_failed`. Payloads name scopes, hosts and
 * times, never a token. A publication that fails is logged and does not
 * undo the grant (the stream is the narration, the binding record or the
 * broker the truth).
 */

/** One credential an external broker handed out for a binding. */
export interface BrokerFetched {
  /** The OAuth provider's name (Provider). */
  readonly provider: string;
  /** The broker URL without query, fragment or userinfo (Endpoint). */
  readonly endpoint: string;
  /** The MCP server (Source). */
  readonly serverId: string;
  readonly bindingScope: string;
  /** The broker's host (BrokerHost). */
  readonly brokerHost: string;
  /** The scopes the broker granted, else those asked for. */
  readonly grantedScopes: readonly string[];
  readonly formatVersion: number;
  readonly expiresAt: Date;
  readonly audienceVerified: boolean;
  readonly actorAsserted: boolean;
}

/** Publishes the OAuth events. */
export interface OAuthEvents {
  /** A grant was obtained or refreshed for `identity`'s run (run '' outside one). */
  credentialExchanged(identity: IdentityQuad, record: BindingRecord, brokerHost: string): Promise<void>;
  /** A broker answered a credential for `identity`'s run (run '' outside one). */
  brokerFetched(identity: IdentityQuad, fetched: BrokerFetched): Promise<void>;
  /** A request to a broker gave no credential; `reason` is the failure (`http_503`, `timeout`, …). */
  brokerFailed(
    identity: IdentityQuad,
    failed: { readonly provider: string; readonly endpoint: string; readonly reason: string },
  ): Promise<void>;
  /** `record`'s server needs authorization: `pauseToken` when a run waits for it, '' otherwise. */
  authRequired(
    author: IdentityQuad,
    record: BindingRecord,
    detail: { readonly reason: UnusableReason; readonly pauseToken?: string; readonly revisionId?: string | null },
  ): Promise<void>;
}

/** The OAuth events over `publisher`. */
export function createOAuthEvents(publisher: EventPublisher, logger: Logger): OAuthEvents {
  const publish = async (type: string, identity: IdentityQuad, payload: Record<string, unknown>) => {
    try {
      await publisher.publish({ type, identity, payload });
    } catch (error) {
      logger.warn({ err: error, type, tenant: identity.tenant }, 'oauth event not published');
    }
  };
  return {
    credentialExchanged: (identity, record, brokerHost) =>
      publish('tool.credential_exchanged', identity, {
        Source: record.server_id,
        BindingScope: record.binding_scope,
        SubjectKind: record.binding_scope,
        BrokerHost: brokerHost,
        GrantedScopes: [...record.scopes],
        // No expires_in: Go's zero time, as the spec's Go-typed payloads carry an unset instant.
        ExpiresAt: record.expires_at ?? '0001-01-01T00:00:00Z',
        AudienceVerified: record.audience_verified === true,
        ActorAsserted: false,
      }),
    brokerFetched: async (identity, fetched) => {
      const expiresAt = fetched.expiresAt.toISOString();
      await publish('tool.provider_credential_fetched', identity, {
        Provider: fetched.provider,
        Endpoint: fetched.endpoint,
        FormatVersion: fetched.formatVersion,
        ExpiresAt: expiresAt,
      });
      await publish('tool.credential_exchanged', identity, {
        Source: fetched.serverId,
        BindingScope: fetched.bindingScope,
        SubjectKind: fetched.bindingScope,
        BrokerHost: fetched.brokerHost,
        GrantedScopes: [...fetched.grantedScopes],
        ExpiresAt: expiresAt,
        AudienceVerified: fetched.audienceVerified,
        ActorAsserted: fetched.actorAsserted,
      });
    },
    brokerFailed: (identity, failed) =>
      publish('tool.provider_credential_fetch_failed', identity, {
        Provider: failed.provider,
        Endpoint: failed.endpoint,
        Reason: failed.reason,
      }),
    authRequired: (author, record, detail) => {
      const at = new Date().toISOString();
      return publish('mcp.connection.auth_required', author, {
        Author: author,
        AgentID: record.agent_id,
        ServerID: record.server_id,
        Transport: record.transport ?? '',
        State: 'auth_required',
        RevisionID: detail.revisionId ?? '',
        PauseToken: detail.pauseToken ?? '',
        Reason: detail.reason,
        OccurredAt: at,
      });
    },
  };
}
