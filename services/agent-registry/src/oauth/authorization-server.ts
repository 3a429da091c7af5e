import {
  discoverAuthorizationServerMetadata,
  discoverOAuthServerInfo,
  exchangeAuthorization,
  extractWWWAuthenticateParams,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError, ServerError, TemporarilyUnavailableError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { resourceUrlFromServerUrl } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpConnection, OAuthProviderConfig } from '@ars/contracts';
import type { StoredAuthorizationServer } from './binding.repository.ts';

/**
 * The host's side of an authorization server, on the official SDK's client
 * auth functions: discovery (the provider's configured endpoints, else RFC
 * 9728 protected resource metadata → RFC 8414), RFC 7591 registration, the
 * PKCE authorization URL, the code exchange, refresh, and RFC 7009
 * revocation (which the SDK has no client function for).
 */

/** The host's OAuth client name at registration. */
const CLIENT_NAME = 'Agent Run Service';

/** A failure of the authorization server itself (down, 5xx, not a server at all): retryable. */
export class AuthorizationServerUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthorizationServerUnavailable';
  }
}

/** The server refused the request (invalid_grant, invalid_client, …): asking again the same way fails again. */
export class AuthorizationRefused extends Error {
  /** The OAuth error code (`invalid_grant`, …). */
  readonly oauthError: string;
  constructor(oauthError: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthorizationRefused';
    this.oauthError = oauthError;
  }
}

/** What a failure of an SDK auth function means: refused by the server, or the server unavailable. */
export function classifyAuthFailure(
  error: unknown,
  what: string,
): AuthorizationRefused | AuthorizationServerUnavailable {
  if (error instanceof AuthorizationRefused || error instanceof AuthorizationServerUnavailable) return error;
  if (
    error instanceof OAuthError &&
    !(error instanceof ServerError) &&
    !(error instanceof TemporarilyUnavailableError)
  ) {
    return new AuthorizationRefused(error.errorCode, `${what}: ${error.errorCode}: ${error.message}`, { cause: error });
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new AuthorizationServerUnavailable(`${what}: ${detail}`, { cause: error });
}

/** `fetch` bounded by `timeoutMs` per request. */
export function boundedFetch(timeoutMs: number): FetchLike {
  return (url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
}

/** Where a server's grant comes from, and which scopes it advertises. */
export interface LocatedAuthorizationServer {
  readonly server: StoredAuthorizationServer;
  /** `scopes_supported` of the protected resource metadata, when there is one. */
  readonly scopesSupported?: readonly string[];
}

/**
 * The authorization server of `spec`: from the provider's `authorize_url`
 * and `token_url` when both are set (metadata built from them, other members
 * discovered when the issuer publishes metadata), else discovered from the
 * server URL (RFC 9728, then RFC 8414 / OpenID discovery). The resource
 * indicator is the protected resource metadata's `resource`, else the server URL.
 */
export async function locateAuthorizationServer(
  spec: McpConnection,
  provider: OAuthProviderConfig | undefined,
  options: { readonly resourceMetadataUrl?: URL; readonly fetchFn: FetchLike },
): Promise<LocatedAuthorizationServer> {
  const fallbackResource = spec.url === undefined ? undefined : resourceUrlFromServerUrl(spec.url).href;
  try {
    if (provider?.authorize_url !== undefined && provider.token_url !== undefined) {
      const issuer = new URL('/', provider.authorize_url).href;
      const published = await discoverAuthorizationServerMetadata(issuer, { fetchFn: options.fetchFn }).catch(
        () => undefined,
      );
      const metadata = {
        issuer,
        response_types_supported: ['code'],
        ...published,
        authorization_endpoint: provider.authorize_url,
        token_endpoint: provider.token_url,
      };
      return {
        server: { url: issuer, metadata, ...(fallbackResource === undefined ? {} : { resource: fallbackResource }) },
      };
    }
    if (spec.url === undefined)
      throw new AuthorizationServerUnavailable(`${spec.server_id} has no URL to discover from`);
    const info = await discoverOAuthServerInfo(spec.url, {
      ...(options.resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl: options.resourceMetadataUrl }),
      fetchFn: options.fetchFn,
    });
    if (info.authorizationServerMetadata === undefined) {
      throw new AuthorizationServerUnavailable(`no authorization server metadata at ${info.authorizationServerUrl}`);
    }
    const resource = info.resourceMetadata?.resource ?? fallbackResource;
    const scopes = info.resourceMetadata?.scopes_supported;
    return {
      server: {
        url: info.authorizationServerUrl,
        metadata: info.authorizationServerMetadata as unknown as Record<string, unknown>,
        ...(resource === undefined ? {} : { resource }),
      },
      ...(scopes === undefined ? {} : { scopesSupported: scopes }),
    };
  } catch (error) {
    throw classifyAuthFailure(error, `discovery of ${spec.server_id}'s authorization server`);
  }
}

const metadataOf = (server: StoredAuthorizationServer) => server.metadata as unknown as AuthorizationServerMetadata;

/** Registers the host as a public client (PKCE, no secret) with `redirectUri` (RFC 7591). */
export async function registerPublicClient(
  server: StoredAuthorizationServer,
  redirectUri: string,
  scopes: readonly string[],
  fetchFn: FetchLike,
) {
  if (typeof server.metadata.registration_endpoint !== 'string') {
    throw new AuthorizationServerUnavailable(
      `the authorization server ${server.url} offers no dynamic client registration and the provider names no client_id`,
    );
  }
  try {
    return await registerClient(server.url, {
      metadata: metadataOf(server),
      clientMetadata: {
        client_name: CLIENT_NAME,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        ...(scopes.length === 0 ? {} : { scope: scopes.join(' ') }),
      },
      fetchFn,
    });
  } catch (error) {
    throw classifyAuthFailure(error, `client registration at ${server.url}`);
  }
}

/** The authorization URL (PKCE S256, `state`, the resource indicator) and its code verifier. */
export async function authorizationUrl(
  server: StoredAuthorizationServer,
  client: OAuthClientInformationMixed,
  request: { readonly redirectUri: string; readonly scopes: readonly string[]; readonly state: string },
): Promise<{ url: URL; verifier: string }> {
  try {
    const started = await startAuthorization(server.url, {
      metadata: metadataOf(server),
      clientInformation: client,
      redirectUrl: request.redirectUri,
      state: request.state,
      ...(request.scopes.length === 0 ? {} : { scope: request.scopes.join(' ') }),
      ...(server.resource === undefined ? {} : { resource: server.resource }),
    });
    return { url: started.authorizationUrl, verifier: started.codeVerifier };
  } catch (error) {
    throw classifyAuthFailure(error, `authorization at ${server.url}`);
  }
}

/** Exchanges the code (with its PKCE verifier) for tokens. */
export async function exchangeCode(
  server: StoredAuthorizationServer,
  client: OAuthClientInformationMixed,
  exchange: { readonly code: string; readonly verifier: string; readonly redirectUri: string },
  fetchFn: FetchLike,
): Promise<OAuthTokens> {
  try {
    return await exchangeAuthorization(server.url, {
      metadata: metadataOf(server),
      clientInformation: client,
      authorizationCode: exchange.code,
      codeVerifier: exchange.verifier,
      redirectUri: exchange.redirectUri,
      ...(server.resource === undefined ? {} : { resource: server.resource }),
      fetchFn,
    });
  } catch (error) {
    throw classifyAuthFailure(error, `code exchange at ${server.url}`);
  }
}

/** Refreshes a grant; the answer keeps the old refresh token when the server sent no new one. */
export async function refreshGrant(
  server: StoredAuthorizationServer,
  client: OAuthClientInformationMixed,
  refreshToken: string,
  fetchFn: FetchLike,
): Promise<OAuthTokens> {
  try {
    return await refreshAuthorization(server.url, {
      metadata: metadataOf(server),
      clientInformation: client,
      refreshToken,
      ...(server.resource === undefined ? {} : { resource: server.resource }),
      fetchFn,
    });
  } catch (error) {
    throw classifyAuthFailure(error, `refresh at ${server.url}`);
  }
}

/**
 * RFC 7009: asks the server to revoke `token` when its metadata names a
 * revocation endpoint; false when it names none. Client authentication as
 * for a public client (`client_id`), or `client_secret_post` with a secret.
 */
export async function revokeAtServer(
  server: StoredAuthorizationServer,
  client: OAuthClientInformationMixed,
  token: { readonly value: string; readonly hint: 'access_token' | 'refresh_token' },
  fetchFn: FetchLike,
): Promise<boolean> {
  const endpoint = server.metadata.revocation_endpoint;
  if (typeof endpoint !== 'string') return false;
  const body = new URLSearchParams({ token: token.value, token_type_hint: token.hint, client_id: client.client_id });
  if (client.client_secret !== undefined) body.set('client_secret', client.client_secret);
  let response: Response;
  try {
    response = await fetchFn(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
    });
  } catch (error) {
    throw classifyAuthFailure(error, `revocation at ${endpoint}`);
  }
  await response.body?.cancel().catch(() => undefined);
  if (!response.ok) throw new AuthorizationServerUnavailable(`revocation at ${endpoint} answered ${response.status}`);
  return true;
}

/** The host of the token endpoint (`BrokerHost` of `tool.credential_exchanged`). */
export function tokenEndpointHost(server: StoredAuthorizationServer): string {
  const endpoint = server.metadata.token_endpoint;
  try {
    return new URL(typeof endpoint === 'string' ? endpoint : server.url).host;
  } catch {
    return '';
  }
}

/** An MCP `initialize` a server without a token answers with 401 when it is OAuth-bound. */
const PROBE_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'ars-agent-registry', version: '0.1.0' },
  },
});

/**
 * Asks the server at `url` without a token whether it wants OAuth (MCP
 * authorization spec): a 401 whose WWW-Authenticate names a
 * `resource_metadata` URL answers that URL; anything else undefined. A
 * session the server opened for the probe is ended.
 */
export async function probeProtectedResource(url: string, fetchFn: FetchLike): Promise<URL | undefined> {
  const response = await fetchFn(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: PROBE_BODY,
  });
  await response.body?.cancel().catch(() => undefined);
  const session = response.headers.get('mcp-session-id');
  if (session !== null) {
    await fetchFn(url, { method: 'DELETE', headers: { 'mcp-session-id': session } })
      .then((ended) => ended.body?.cancel())
      .catch(() => undefined);
  }
  if (response.status !== 401) return undefined;
  return extractWWWAuthenticateParams(response).resourceMetadataUrl;
}

export type { OAuthClientInformationMixed, OAuthTokens };
