import { createHash } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { MCP_CALL_TOOL, refuse } from '@ars/contracts';
import type { IdentityQuad, McpConnection, OAuthProviderConfig } from '@ars/contracts';
import { BrokerError } from '@ars/service-kit';
import type { BrokerCredential, BrokerFetch, CredentialBrokerClient, CredentialRequest } from '@ars/service-kit';
import type { Logger } from '@ars/telemetry';
import type { AgentServers, ServerAccess } from '../mcp/index.ts';
import { bindingIdOf, bindingSubject } from './binding-id.ts';
import type { BindingSubject } from './binding-id.ts';
import type { OAuthEvents } from './events.ts';
import { brokerAudienceVerified } from './token-audience.ts';

/**
 * OAuth providers whose tokens come from an external credential broker.
 *
 * The rule: an OAuth provider whose `credential_broker` parses as an
 * `http:` or `https:` URL is such a broker, asked with `@ars/service-kit`'s
 * credential broker protocol (purpose `tool`, provider = the provider name,
 * resource = the server URL, scopes = the agent's capability scopes then
 * the provider's, subject = the binding scope's tenant, user or session,
 * actor = agent-registry with the agent and the run). There is no
 * interactive flow and no binding record: the broker holds the grant, the
 * host a short-lived token, cached by the client until shortly before it
 * expires. Any other value (a name, `vault://…`) names where the operator
 * keeps the provider's secrets and keeps the interactive flow (`_oauth.begin`).
 *
 * Every use of a binding (a call, a catalogue, a public read) asks for the
 * token first, as the run's identity, so that each request actually sent
 * to the broker is published on that run's stream; the connection's
 * requests then find it cached. A server that answers the token 401 has it
 * dropped from the cache: that call is refused `server_unavailable`, the
 * next fetches another. A broker that does not answer (or 5xx, 408, 429,
 * an answer that is not the protocol's) makes the server unavailable
 * (retryable); a 4xx refuses the binding (`auth_required`, permanent: no
 * interactive authorization exists to fix it).
 */

/** Whether an OAuth provider's `credential_broker` is an external broker the host asks (see the module comment). */
export function isBrokerUrl(credentialBroker: string): boolean {
  try {
    const { protocol } = new URL(credentialBroker);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** A broker URL as events name it (Endpoint): no query, fragment or userinfo. */
export function brokerEndpoint(url: string): string {
  const endpoint = new URL(url);
  endpoint.search = '';
  endpoint.hash = '';
  endpoint.username = '';
  endpoint.password = '';
  return endpoint.href;
}

/** The host's side of brokered providers, as the gate asks it. */
export interface BrokeredGrants {
  /** `spec`'s OAuth provider when its tokens come from an external broker; else undefined. */
  providerOf(agent: AgentServers, spec: McpConnection): OAuthProviderConfig | undefined;
  /**
   * How `run` (the run owner's identity, `run` its task id or '') reaches
   * `spec`: `bound` once the broker handed out (or the cache holds) a token
   * for the run's binding, else `unavailable` (`refused` for a 4xx).
   */
  access(
    run: IdentityQuad,
    agent: AgentServers,
    spec: McpConnection,
    provider: OAuthProviderConfig,
    scopes: readonly string[],
  ): Promise<ServerAccess>;
}

/** What the brokered grants use. */
export interface BrokeredGrantsDeps {
  /** agent-registry's credential broker client (its cache is the tokens' only store). */
  readonly client: CredentialBrokerClient;
  readonly events: OAuthEvents;
  readonly logger: Logger;
}

/** A 4xx other than 408 and 429: the broker refuses this binding (asking again fails again). */
function isRefusal(error: BrokerError): boolean {
  return /^http_4\d\d$/.test(error.reason) && !error.retryable;
}

function requestOf(
  provider: OAuthProviderConfig,
  spec: McpConnection,
  subject: BindingSubject,
  scopes: readonly string[],
  run: string,
): CredentialRequest {
  return {
    url: provider.credential_broker,
    purpose: 'tool',
    provider: provider.provider_name,
    resource: spec.url,
    scopes,
    subject: {
      kind: subject.binding_scope,
      tenant: subject.tenant,
      ...(subject.user === '' ? {} : { user: subject.user }),
      ...(subject.session === '' ? {} : { session: subject.session }),
    },
    actor: { agent_id: subject.agent_id, ...(run === '' ? {} : { run }) },
  };
}

/**
 * The pool key part of a brokered binding: the binding id and a digest of
 * the broker, provider and scopes, so that a connection never outlives a
 * change of the broker it asks.
 */
function poolBindingId(subject: BindingSubject, request: CredentialRequest): string {
  const asked = JSON.stringify([request.url, request.provider, [...(request.scopes ?? [])].sort()]);
  return `${bindingIdOf(subject)}.${createHash('sha256').update(asked).digest('base64url').slice(0, 12)}`;
}

export function createBrokeredGrants(deps: BrokeredGrantsDeps): BrokeredGrants {
  const { client, events } = deps;

  /** The credential of `request`, publishing the broker request it took (if any) as `identity`. */
  async function credentialFor(identity: IdentityQuad, request: CredentialRequest, spec: McpConnection) {
    const seen: { fetch?: BrokerFetch } = {};
    const endpoint = brokerEndpoint(request.url);
    let credential: BrokerCredential;
    try {
      credential = await client.get(request, (fetch) => {
        seen.fetch = fetch;
      });
    } catch (error) {
      const failed = seen.fetch;
      if (failed !== undefined) {
        await events.brokerFailed(identity, { provider: request.provider, endpoint, reason: failed.outcome });
      }
      throw error;
    }
    if (seen.fetch !== undefined) {
      await events.brokerFetched(identity, {
        provider: request.provider,
        endpoint,
        serverId: spec.server_id,
        bindingScope: request.subject.kind,
        brokerHost: credential.broker,
        grantedScopes: credential.grantedScopes ?? request.scopes ?? [],
        formatVersion: credential.formatVersion,
        expiresAt: credential.expiresAt,
        audienceVerified: brokerAudienceVerified(credential.credential, credential.audience, request.resource ?? ''),
        actorAsserted: credential.actorAsserted,
      });
    }
    return credential;
  }

  const failureText = (provider: string, error: BrokerError) =>
    `the credential broker of OAuth provider ${provider} gave no token for the binding (${error.reason})` +
    (isRefusal(error) ? ': it refuses this binding, and no interactive authorization exists for it' : '');

  /** A broker failure met by a connection's request, as `_mcp.call_tool` refuses it. */
  function refusalOf(error: unknown, spec: McpConnection, provider: string): unknown {
    if (!(error instanceof BrokerError)) return error;
    const message = `MCP server ${spec.server_id}: ${failureText(provider, error)}`;
    return refuse(MCP_CALL_TOOL, isRefusal(error) ? 'auth_required' : 'server_unavailable', message);
  }

  /** The transport's view of the binding: `tokens()` from the broker client's cache (else the broker). */
  function tokenProvider(owner: IdentityQuad, request: CredentialRequest, spec: McpConnection): OAuthClientProvider {
    const never = (): never => {
      throw refuse(
        MCP_CALL_TOOL,
        'auth_required',
        `MCP server ${spec.server_id}: its OAuth provider's tokens come from a credential broker; the host starts no authorization`,
      );
    };
    return {
      redirectUrl: undefined,
      clientMetadata: { redirect_uris: [] },
      clientInformation: () => undefined,
      tokens: async () => {
        const credential = await credentialFor(owner, request, spec).catch((error: unknown) => {
          throw refusalOf(error, spec, request.provider);
        });
        return { access_token: credential.credential, token_type: 'Bearer' };
      },
      discoveryState: () => {
        // The server refused the broker's token (401): the next use fetches another.
        client.invalidate(request);
        deps.logger.info(
          { server_id: spec.server_id, provider: request.provider },
          'mcp server refused a broker token',
        );
        throw refuse(
          MCP_CALL_TOOL,
          'server_unavailable',
          `MCP server ${spec.server_id} refused the token its credential broker gave; the next call fetches another`,
        );
      },
      saveTokens: never,
      redirectToAuthorization: never,
      saveCodeVerifier: never,
      codeVerifier: never,
    };
  }

  return {
    providerOf(agent, spec) {
      if (spec.oauth_provider === undefined) return undefined;
      const provider = agent.oauth_providers?.find((p) => p.provider_name === spec.oauth_provider);
      return provider !== undefined && isBrokerUrl(provider.credential_broker) ? provider : undefined;
    },
    async access(run, agent, spec, provider, scopes) {
      const subject = bindingSubject(run, agent.agent_id, spec);
      try {
        await credentialFor(run, requestOf(provider, spec, subject, scopes, run.run), spec);
      } catch (error) {
        if (!(error instanceof BrokerError)) throw error;
        return { kind: 'unavailable', reason: failureText(provider.provider_name, error), refused: isRefusal(error) };
      }
      // The connection outlives this use: its own fetches are the run owner's, outside a run.
      const owner = { ...run, run: '' };
      const request = requestOf(provider, spec, subject, scopes, '');
      return {
        kind: 'bound',
        binding: { binding_id: poolBindingId(subject, request), authProvider: tokenProvider(owner, request, spec) },
      };
    },
  };
}
