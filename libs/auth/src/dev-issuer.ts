import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { JSONWebKeySet, JWK } from 'jose';
import type { VerifiedIdentity } from '@ars/contracts';
import { createTokenVerifier } from './token-verifier.ts';
import type { TokenVerifier } from './token-verifier.ts';

/**
 * The identity of the default development token: tenant, user and session
 * `dev` with `admin` and `console:fleet`. Printed at boot as
 * `SERVICE_DEV_TOKEN=` and returned by `POST /v1/dev/bootstrap.json {}`.
 */
export const DEV_DEFAULT_IDENTITY: VerifiedIdentity = Object.freeze({
  tenant: 'dev',
  user: 'dev',
  session: 'dev',
  scopes: Object.freeze(['admin', 'console:fleet']),
});

/** Default lifetime of a minted development token: 12 hours, in seconds. */
export const DEV_TOKEN_TTL_SECONDS = 12 * 60 * 60;

/** Options of {@link createDevIssuer}. */
export interface DevIssuerOptions {
  /** The `iss` of minted tokens. @default 'ars-dev' */
  readonly issuer?: string;
  /** The `aud` of minted tokens. @default 'ars' */
  readonly audience?: string;
}

/** What a development token says. */
export interface DevTokenRequest {
  readonly tenant: string;
  readonly user: string;
  /** The default session claim; omitted means the header must name one. */
  readonly session?: string;
  /** @default [] */
  readonly scopes?: readonly string[];
  /** Lifetime in seconds. @default 43200 (12 h) */
  readonly ttlSeconds?: number;
}

/** An in-memory token issuer for development mode and tests. */
export interface DevIssuer {
  readonly issuer: string;
  readonly audience: string;
  /** The `kid` of the ephemeral key. */
  readonly kid: string;
  /** The public half, as a JWKS document (what an OIDC `jwks_uri` would serve). */
  readonly publicJwks: JSONWebKeySet;
  /** A verifier that accepts exactly this issuer's tokens (ES256 only). */
  readonly verifier: TokenVerifier;
  /** Signs a token for the given identity. */
  mint(request: DevTokenRequest): Promise<string>;
}

function assertNonEmpty(name: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw new TypeError(`dev issuer: ${name} must be a non-empty string`);
}

/**
 * Generates an ephemeral ES256 key pair (the private key never leaves this
 * process and is not extractable) and returns an issuer that mints tokens
 * with `iss`, `aud`, `sub` (= user), `iat`, `exp`, `tenant`, `user`,
 * `session` and `scopes`. A restart forgets the key: previously minted
 * tokens stop verifying.
 */
export async function createDevIssuer(options: DevIssuerOptions = {}): Promise<DevIssuer> {
  const issuer = options.issuer ?? 'ars-dev';
  const audience = options.audience ?? 'ars';
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = `dev-${randomUUID()}`;
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  const verifier = createTokenVerifier({ issuer, audience, keys: [publicJwk], algorithms: ['ES256'] });

  async function mint(request: DevTokenRequest): Promise<string> {
    assertNonEmpty('tenant', request.tenant);
    assertNonEmpty('user', request.user);
    if (request.session !== undefined) assertNonEmpty('session', request.session);
    const ttl = request.ttlSeconds ?? DEV_TOKEN_TTL_SECONDS;
    if (!Number.isInteger(ttl) || ttl <= 0) throw new TypeError('dev issuer: ttlSeconds must be a positive integer');
    const claims = {
      tenant: request.tenant,
      user: request.user,
      ...(request.session === undefined ? {} : { session: request.session }),
      scopes: [...(request.scopes ?? [])],
    };
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(request.user)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + ttl)
      .sign(privateKey);
  }

  return Object.freeze({ issuer, audience, kid, publicJwks: { keys: [publicJwk] }, verifier, mint });
}
