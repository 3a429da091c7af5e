import { createHmac, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Response } from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  AccessDeniedError,
  InvalidGrantError,
  InvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * A local OAuth 2.1 authorization server and an MCP server it protects, on
 * one HTTP port, for tests of OAuth-bound MCP connections. Built on the
 * official SDK: `mcpAuthRouter` (metadata, /authorize, /token, /register,
 * /revoke) over a small in-memory provider (PKCE S256, dynamic
 * registration, refresh with rotation, revocation), and a stateless
 * streamable HTTP MCP endpoint at `/mcp` behind `requireBearerAuth` with
 * RFC 9728 protected resource metadata. Consent is automatic: /authorize
 * redirects to the redirect URI with `code` and `state` (or `error` when
 * {@link OAuthMcpServer.consent} is `deny`). The user is the `login_hint`
 * query member of the authorize URL (default `anonymous`).
 *
 * Tools: `whoami` answers the token's subject, scopes and serial (each
 * token issued gets the next serial), never the token itself. Prompt:
 * `greeting`. Resource: `whoami://token` (the token's subject and scopes, as
 * JSON). A credential broker a test runs can hand out tokens of this server
 * that it mints with {@link OAuthMcpServer.issueAccessToken} (the MCP
 * endpoint checks them as any other).
 */

/** Options of {@link startOAuthMcpServer}. */
export interface OAuthMcpServerOptions {
  /** Lifetime of an access token, in seconds. @default 3600 */
  readonly accessTokenTtlSeconds?: number;
  /** Issue refresh tokens (rotated at each refresh). @default true */
  readonly refreshTokens?: boolean;
  /** Issue access tokens as JWTs (HS256, `aud` = the resource indicator) instead of opaque strings. @default false */
  readonly jwtAccessTokens?: boolean;
  /** `scopes_supported` of the metadata. @default ['mcp:tools'] */
  readonly scopes?: readonly string[];
}

/** One token request the server answered. */
export interface TokenRequestSeen {
  readonly grant_type: 'authorization_code' | 'refresh_token';
  readonly client_id: string;
  /** The resource indicator sent (RFC 8707). */
  readonly resource?: string;
}

/** A running server. */
export interface OAuthMcpServer {
  /** The MCP endpoint (streamable HTTP): `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** The authorization server's issuer: `http://127.0.0.1:<port>/`. */
  readonly issuer: string;
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  /** What /authorize does next: redirect with a code (`approve`, the default) or with `error=access_denied`. */
  consent: 'approve' | 'deny';
  /** Every secret the server issued (codes, access and refresh tokens, client secrets): tests look for them in events and logs. */
  readonly issued: readonly string[];
  /** The token requests answered, in order. */
  readonly tokenRequests: readonly TokenRequestSeen[];
  /** The tokens revoked through /revoke (RFC 7009), in order. */
  readonly revoked: readonly string[];
  /** Clients registered through /register (RFC 7591). */
  readonly registrations: number;
  /** Registers a client as an operator would (a provider's `client_id`), public unless given a secret. */
  registerClient(client: { client_id: string; redirect_uris: string[]; client_secret?: string }): void;
  /** Forgets every token (as if the user revoked the app at the provider): the next refresh is `invalid_grant`. */
  forgetTokens(): void;
  /**
   * Mints an access token as the authorization server would grant it (no
   * code, no refresh token): what an external credential broker holding
   * this server's grants hands out. Its `aud` (a JWT's) and the resource it
   * is checked against are `resource` (@default the MCP endpoint); it lasts
   * `ttlSeconds` (@default the server's access token lifetime).
   */
  issueAccessToken(grant: {
    readonly subject: string;
    readonly scopes?: readonly string[];
    readonly resource?: string;
    readonly ttlSeconds?: number;
  }): string;
  /** Makes every access token issued so far expired (the MCP endpoint answers them 401). */
  expireAccessTokens(): void;
  /** Stops listening. */
  stop(): Promise<void>;
}

interface CodeEntry {
  readonly client_id: string;
  readonly challenge: string;
  readonly redirect_uri: string;
  readonly scopes: string[];
  readonly subject: string;
  readonly expires_ms: number;
}

interface TokenEntry {
  readonly kind: 'access' | 'refresh';
  readonly client_id: string;
  readonly subject: string;
  readonly scopes: string[];
  readonly resource?: string;
  /** Seconds since the epoch. */
  expires_s: number;
  readonly serial: number;
}

const CODE_TTL_MS = 60_000;
const REFRESH_TTL_S = 30 * 86_400;

const secret = () => randomBytes(24).toString('base64url');

/** The in-memory authorization server behind the SDK's router. */
class TestAuthorizationServer implements OAuthServerProvider {
  consent: 'approve' | 'deny' = 'approve';
  readonly issued: string[] = [];
  readonly tokenRequests: TokenRequestSeen[] = [];
  readonly revoked: string[] = [];
  registrations = 0;
  readonly #clients = new Map<string, OAuthClientInformationFull>();
  readonly #codes = new Map<string, CodeEntry>();
  readonly #tokens = new Map<string, TokenEntry>();
  readonly #jwtKey = randomBytes(32);
  #serial = 0;
  readonly #options: Required<Omit<OAuthMcpServerOptions, 'scopes'>>;

  constructor(options: OAuthMcpServerOptions) {
    this.#options = {
      accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? 3_600,
      refreshTokens: options.refreshTokens ?? true,
      jwtAccessTokens: options.jwtAccessTokens ?? false,
    };
  }

  get clientsStore(): OAuthRegisteredClientsStore {
    return {
      getClient: (id) => this.#clients.get(id),
      registerClient: (client) => {
        const full = client as OAuthClientInformationFull;
        this.#clients.set(full.client_id, full);
        this.registrations += 1;
        if (full.client_secret !== undefined) this.issued.push(full.client_secret);
        return full;
      },
    };
  }

  addClient(client: OAuthClientInformationFull): void {
    this.#clients.set(client.client_id, client);
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    if (this.consent === 'deny') throw new AccessDeniedError('the user denied the authorization');
    const hint = res.req.query.login_hint;
    const code = secret();
    this.issued.push(code);
    this.#codes.set(code, {
      client_id: client.client_id,
      challenge: params.codeChallenge,
      redirect_uri: params.redirectUri,
      scopes: params.scopes ?? [],
      subject: typeof hint === 'string' && hint !== '' ? hint : 'anonymous',
      expires_ms: Date.now() + CODE_TTL_MS,
    });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(302, target.href);
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const entry = this.#codes.get(code);
    if (entry === undefined) throw new InvalidGrantError('unknown or used authorization code');
    return entry.challenge;
  }

  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    _verifier?: string,
    redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    const entry = this.#codes.get(code);
    this.#codes.delete(code);
    if (entry === undefined || entry.client_id !== client.client_id || entry.expires_ms < Date.now()) {
      throw new InvalidGrantError('unknown, used or expired authorization code');
    }
    if (redirectUri !== undefined && redirectUri !== entry.redirect_uri)
      throw new InvalidGrantError('redirect_uri mismatch');
    this.tokenRequests.push({
      grant_type: 'authorization_code',
      client_id: client.client_id,
      ...(resource === undefined ? {} : { resource: resource.href }),
    });
    return this.#grant(client.client_id, entry.subject, entry.scopes, resource?.href);
  }

  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
    _scopes?: string[],
    resource?: URL,
  ): Promise<OAuthTokens> {
    const entry = this.#tokens.get(refreshToken);
    this.tokenRequests.push({
      grant_type: 'refresh_token',
      client_id: client.client_id,
      ...(resource === undefined ? {} : { resource: resource.href }),
    });
    if (entry?.kind !== 'refresh' || entry.client_id !== client.client_id || entry.expires_s * 1_000 < Date.now()) {
      throw new InvalidGrantError('unknown, revoked or expired refresh token');
    }
    // Rotation: the refresh token used is spent.
    this.#tokens.delete(refreshToken);
    return this.#grant(client.client_id, entry.subject, entry.scopes, resource?.href ?? entry.resource);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const entry = this.#tokens.get(token);
    if (entry?.kind !== 'access') throw new InvalidTokenError('unknown or revoked access token');
    return {
      token,
      clientId: entry.client_id,
      scopes: entry.scopes,
      expiresAt: entry.expires_s,
      ...(entry.resource === undefined ? {} : { resource: new URL(entry.resource) }),
      extra: { subject: entry.subject, serial: entry.serial },
    };
  }

  async revokeToken(_client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    this.revoked.push(request.token);
    const entry = this.#tokens.get(request.token);
    this.#tokens.delete(request.token);
    if (entry?.kind !== 'refresh') return;
    // Revoking a refresh token ends the grant: its access tokens too.
    for (const [token, other] of this.#tokens) {
      if (other.subject === entry.subject && other.client_id === entry.client_id) this.#tokens.delete(token);
    }
  }

  forgetTokens(): void {
    this.#tokens.clear();
  }

  expireAccessTokens(): void {
    const past = Math.floor(Date.now() / 1_000) - 1;
    for (const entry of this.#tokens.values()) if (entry.kind === 'access') entry.expires_s = past;
  }

  #accessToken(subject: string, scopes: string[], resource: string | undefined, expires: number): string {
    if (!this.#options.jwtAccessTokens) return secret();
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({
      sub: subject,
      scope: scopes.join(' '),
      exp: expires,
      jti: secret(),
      ...(resource === undefined ? {} : { aud: resource }),
    })}`;
    return `${body}.${createHmac('sha256', this.#jwtKey).update(body).digest('base64url')}`;
  }

  /** A new access token (registered, counted in `issued`); `ttl` in seconds. */
  mintAccess(clientId: string, subject: string, scopes: string[], resource: string | undefined, ttl: number): string {
    const expires = Math.floor(Date.now() / 1_000) + ttl;
    const access = this.#accessToken(subject, scopes, resource, expires);
    this.#serial += 1;
    const base = { client_id: clientId, subject, scopes, ...(resource === undefined ? {} : { resource }) };
    this.#tokens.set(access, { ...base, kind: 'access', expires_s: expires, serial: this.#serial });
    this.issued.push(access);
    return access;
  }

  get accessTokenTtlSeconds(): number {
    return this.#options.accessTokenTtlSeconds;
  }

  #grant(clientId: string, subject: string, scopes: string[], resource: string | undefined): OAuthTokens {
    const ttl = this.#options.accessTokenTtlSeconds;
    const access = this.mintAccess(clientId, subject, scopes, resource, ttl);
    const base = { client_id: clientId, subject, scopes, ...(resource === undefined ? {} : { resource }) };
    let refresh: string | undefined;
    if (this.#options.refreshTokens) {
      refresh = secret();
      const refreshExpires = Math.floor(Date.now() / 1_000) + REFRESH_TTL_S;
      this.#tokens.set(refresh, { ...base, kind: 'refresh', expires_s: refreshExpires, serial: this.#serial });
      this.issued.push(refresh);
    }
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: ttl,
      ...(scopes.length === 0 ? {} : { scope: scopes.join(' ') }),
      ...(refresh === undefined ? {} : { refresh_token: refresh }),
    };
  }
}

/** The MCP server of one request (stateless): `whoami` echoes the caller's token subject. */
function mcpServerFor(): McpServer {
  const server = new McpServer({ name: 'ars-test-oauth-mcp', version: '0.1.0' });
  server.registerTool(
    'whoami',
    { description: "Answers the caller's token subject, scopes and serial.", annotations: { readOnlyHint: true } },
    async (extra) => {
      const auth = extra.authInfo;
      const answer = { subject: auth?.extra?.subject, scopes: auth?.scopes ?? [], serial: auth?.extra?.serial };
      return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
    },
  );
  server.registerPrompt('greeting', { description: 'Greets the token subject.' }, (extra) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `hello ${String(extra.authInfo?.extra?.subject)}` } }],
  }));
  server.registerResource(
    'token',
    'whoami://token',
    { description: "The caller's token subject and scopes.", mimeType: 'application/json' },
    (uri, extra) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify({ subject: extra.authInfo?.extra?.subject, scopes: extra.authInfo?.scopes ?? [] }),
        },
      ],
    }),
  );
  return server;
}

/** Starts the authorization server and the MCP server on a free port of 127.0.0.1. */
export async function startOAuthMcpServer(options: OAuthMcpServerOptions = {}): Promise<OAuthMcpServer> {
  const app = express();
  const http: Server = await new Promise((resolve, reject) => {
    const listening = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(listening)));
  });
  const port = (http.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const mcpUrl = new URL(`${origin}/mcp`);
  const provider = new TestAuthorizationServer(options);
  const noLimit = { rateLimit: false as const };
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(`${origin}/`),
      resourceServerUrl: mcpUrl,
      scopesSupported: [...(options.scopes ?? ['mcp:tools'])],
      authorizationOptions: noLimit,
      tokenOptions: noLimit,
      clientRegistrationOptions: noLimit,
      revocationOptions: noLimit,
    }),
  );
  const bearer = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
    expectedResource: mcpUrl,
  });
  app.post('/mcp', bearer, express.json(), async (req, res) => {
    const server = mcpServerFor();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  // Stateless: no server-initiated stream and no session to end.
  app.get('/mcp', bearer, (_req, res) => void res.status(405).set('Allow', 'POST').end());
  app.delete('/mcp', bearer, (_req, res) => void res.status(405).set('Allow', 'POST').end());

  return {
    url: mcpUrl.href,
    issuer: `${origin}/`,
    authorizeUrl: `${origin}/authorize`,
    tokenUrl: `${origin}/token`,
    get consent() {
      return provider.consent;
    },
    set consent(value) {
      provider.consent = value;
    },
    issued: provider.issued,
    tokenRequests: provider.tokenRequests,
    revoked: provider.revoked,
    get registrations() {
      return provider.registrations;
    },
    registerClient(client) {
      provider.addClient({
        client_id: client.client_id,
        redirect_uris: client.redirect_uris,
        token_endpoint_auth_method: client.client_secret === undefined ? 'none' : 'client_secret_post',
        ...(client.client_secret === undefined ? {} : { client_secret: client.client_secret }),
      });
    },
    issueAccessToken: (grant) =>
      provider.mintAccess(
        'credential-broker',
        grant.subject,
        [...(grant.scopes ?? [])],
        grant.resource ?? mcpUrl.href,
        grant.ttlSeconds ?? provider.accessTokenTtlSeconds,
      ),
    forgetTokens: () => provider.forgetTokens(),
    expireAccessTokens: () => provider.expireAccessTokens(),
    stop: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
