import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isServiceError, MCP_CALL_TOOL, refuse } from '@ars/contracts';
import type { AuthRequiredServer, IdentityQuad, McpConnection, OAuthProviderConfig } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import type { AgentServers, OAuthGate, PoolBinding, ServerAccess } from '../mcp/index.ts';
import { probeProtectedResource } from './authorization-server.ts';
import { bindingIdOf, bindingScopeOf, bindingSubject } from './binding-id.ts';
import type { BindingRepository, UnusableReason } from './binding.repository.ts';
import type { BrokeredGrants } from './broker-grants.ts';
import { GrantUnusable } from './grants.ts';
import type { Grants } from './grants.ts';

/**
 * Which servers are OAuth-bound and how a run reaches them. An HTTP
 * (streamable HTTP or SSE) connection is OAuth-bound when it names an
 * `oauth_provider`, or when its server
 * answered a request without a token with 401 and a `resource_metadata`
 * WWW-Authenticate (MCP authorization spec: found after a connection failed
 * to open, or by `_oauth.begin`'s probe, and remembered by this replica; a
 * binding record of the run's own binding says so too, after a restart).
 * A connection whose provider's `credential_broker` is an http(s) URL gets
 * its tokens from that broker (`broker-grants.ts`), never from a flow.
 */

/** How a server is OAuth-bound: its provider (when configured) and the scopes its capabilities need. */
export interface OAuthBound {
  readonly provider?: OAuthProviderConfig;
  /** The provider's name, or the server id for a discovered server (event SourceName). */
  readonly provider_name: string;
  /** The protected resource metadata URL a 401 named (discovered servers). */
  readonly resourceMetadataUrl?: URL;
  /** The agent's capability scopes for the server, then the provider's. */
  readonly scopes: readonly string[];
}

/** The gate of the MCP host, and what the flows ask of it. */
export interface OAuthServerGate extends OAuthGate {
  /** How `spec` is OAuth-bound; with `probe`, an HTTP server not known yet is asked. Undefined: it is not. */
  bound(
    agent: AgentServers,
    spec: McpConnection,
    options: { readonly probe: boolean },
  ): Promise<OAuthBound | undefined>;
  /** The `auth_required` entry of `spec` for `reason`. */
  required(agent: AgentServers, spec: McpConnection, reason: UnusableReason): AuthRequiredServer;
}

/** What the gate reads. */
export interface GateDeps {
  readonly grants: Grants;
  readonly bindings: BindingRepository;
  /**
   * Requests of the probe whether a server asks for OAuth: an MCP
   * `initialize` to the MCP server itself, so bounded as a connect
   * (MCP_CONNECT_TIMEOUT_MS), not as a request to an authorization server.
   */
  readonly probeFetchFn: FetchLike;
  /** Providers whose tokens come from an external credential broker. */
  readonly brokered: BrokeredGrants;
  readonly redirectUri: string;
  readonly logger: Logger;
}

const isHttp = (spec: McpConnection) => spec.transport !== 'stdio' && spec.url !== undefined;

function scopesOf(agent: AgentServers, spec: McpConnection, provider: OAuthProviderConfig | undefined): string[] {
  const needed = (agent.oauth_capabilities ?? [])
    .filter((c) => c.server_id === spec.server_id)
    .flatMap((c) => c.scopes);
  return [...new Set([...needed, ...(provider?.scopes ?? [])])];
}

/**
 * The transport's view of a binding's grant (an SDK `OAuthClientProvider`):
 * `tokens()` answers the binding's current access token (refreshed when due).
 * It never starts an authorization: a 401 reaches `discoveryState()`, which
 * refreshes the grant and refuses the request (`server_unavailable`: call
 * again), or, when it cannot, expires the binding and refuses `auth_required`.
 */
function grantProvider(
  grants: Grants,
  bindingId: string,
  owner: IdentityQuad,
  redirectUri: string,
): OAuthClientProvider {
  const never = (): never => {
    throw refuse(
      MCP_CALL_TOOL,
      'auth_required',
      `binding ${bindingId}: the host never starts an authorization mid-call`,
    );
  };
  const refusal = (error: unknown): never => {
    if (error instanceof GrantUnusable) {
      throw refuse(MCP_CALL_TOOL, 'auth_required', `binding ${bindingId}: ${error.reason}`);
    }
    throw error;
  };
  return {
    get redirectUrl() {
      return redirectUri;
    },
    get clientMetadata() {
      return { redirect_uris: [redirectUri] };
    },
    clientInformation: () => undefined,
    tokens: async () => {
      const token = await grants.accessToken(bindingId, owner).catch(refusal);
      return { access_token: token, token_type: 'Bearer' };
    },
    discoveryState: async () => {
      await grants.rejected(bindingId, owner).catch(refusal);
      throw refuse(
        MCP_CALL_TOOL,
        'server_unavailable',
        `the server refused binding ${bindingId}'s access token; the grant was refreshed: call again`,
      );
    },
    saveTokens: never,
    redirectToAuthorization: never,
    saveCodeVerifier: never,
    codeVerifier: never,
  };
}

/** Creates the gate. */
export function createOAuthGate(deps: GateDeps): OAuthServerGate {
  /** Protected resource metadata URLs of the HTTP servers found OAuth-bound, by server URL. */
  const discovered = new Map<string, URL>();

  const required = (agent: AgentServers, spec: McpConnection, reason: UnusableReason): AuthRequiredServer => {
    const provider = agent.oauth_providers?.find((p) => p.provider_name === spec.oauth_provider);
    return {
      server_id: spec.server_id,
      provider_name: spec.oauth_provider ?? spec.server_id,
      binding_scope: bindingScopeOf(spec),
      scopes: scopesOf(agent, spec, provider),
      reason,
    };
  };

  async function probe(spec: McpConnection): Promise<URL | undefined> {
    if (!isHttp(spec)) return undefined;
    const url = spec.url as string;
    const known = discovered.get(url);
    if (known !== undefined) return known;
    const found = await probeProtectedResource(url, deps.probeFetchFn).catch((error: unknown) => {
      deps.logger.info({ server_id: spec.server_id, reason: (error as Error).message }, 'mcp oauth probe failed');
      return undefined;
    });
    if (found !== undefined) {
      discovered.set(url, found);
      deps.logger.info({ server_id: spec.server_id }, 'mcp server asks for OAuth (resource metadata)');
    }
    return found;
  }

  const gate: OAuthServerGate = {
    required,
    async bound(agent, spec, options) {
      // A stdio server has no HTTP request to carry a token on.
      if (!isHttp(spec)) return undefined;
      if (spec.oauth_provider !== undefined) {
        const provider = agent.oauth_providers?.find((p) => p.provider_name === spec.oauth_provider);
        return {
          ...(provider === undefined ? {} : { provider }),
          provider_name: spec.oauth_provider,
          scopes: scopesOf(agent, spec, provider),
        };
      }
      const resourceMetadataUrl = isHttp(spec)
        ? (discovered.get(spec.url as string) ?? (options.probe ? await probe(spec) : undefined))
        : undefined;
      if (resourceMetadataUrl === undefined) return undefined;
      return { provider_name: spec.server_id, resourceMetadataUrl, scopes: scopesOf(agent, spec, undefined) };
    },
    async access(run, agent, spec): Promise<ServerAccess> {
      if (!isHttp(spec)) return { kind: 'open' };
      const brokered = deps.brokered.providerOf(agent, spec);
      if (brokered !== undefined) {
        return deps.brokered.access(run, agent, spec, brokered, scopesOf(agent, spec, brokered));
      }
      const bindingId = bindingIdOf(bindingSubject(run, agent.agent_id, spec));
      const known = spec.oauth_provider !== undefined || discovered.has(spec.url as string);
      // Not known bound on this replica: a binding record of the run's own binding says it is.
      if (!known && (await deps.bindings.get(bindingId)) === null) return { kind: 'open' };
      try {
        await deps.grants.fresh(bindingId, run);
      } catch (error) {
        if (error instanceof GrantUnusable)
          return { kind: 'auth_required', server: required(agent, spec, error.reason) };
        const reason = isServiceError(error) || error instanceof Error ? error.message : String(error);
        return { kind: 'unavailable', reason: `the grant of ${spec.server_id} cannot be read now: ${reason}` };
      }
      const owner = { ...run, run: '' };
      const binding: PoolBinding = {
        binding_id: bindingId,
        authProvider: grantProvider(deps.grants, bindingId, owner, deps.redirectUri),
      };
      return { kind: 'bound', binding };
    },
    async unauthorized(_run, agent, spec) {
      if (spec.oauth_provider !== undefined || !isHttp(spec)) return undefined;
      return (await probe(spec)) === undefined ? undefined : required(agent, spec, 'no_grant');
    },
    onBindingClosed(listener) {
      deps.grants.onClosed(listener);
    },
  };
  return gate;
}
