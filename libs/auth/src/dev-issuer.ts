import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import type { VerifiedIdentity } from '@ars/contracts';
import { DEFAULT_TOKEN_TTL_SECONDS, issuerFromKey } from './token-issuer.ts';
import type { TokenIssuer, TokenRequest } from './token-issuer.ts';

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
export const DEV_TOKEN_TTL_SECONDS = DEFAULT_TOKEN_TTL_SECONDS;

/** Options of {@link createDevIssuer}. */
export interface DevIssuerOptions {
  /** The `iss` of minted tokens. @default 'ars-dev' */
  readonly issuer?: string;
  /** The `aud` of minted tokens. @default 'ars' */
  readonly audience?: string;
}

/** What a development token says. */
export type DevTokenRequest = TokenRequest;

/** An in-memory token issuer for development mode and tests (ES256, ephemeral key). */
export type DevIssuer = TokenIssuer;

/**
 * Generates an ephemeral ES256 key pair (the private key never leaves this
 * process and is not extractable) and returns an issuer that mints tokens
 * with `iss`, `aud`, `sub` (= user), `jti`, `iat`, `exp`, `tenant`, `user`,
 * `session` and `scopes`. A restart forgets the key: previously minted
 * tokens stop verifying.
 */
export async function createDevIssuer(options: DevIssuerOptions = {}): Promise<DevIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return issuerFromKey({
    issuer: options.issuer ?? 'ars-dev',
    audience: options.audience ?? 'ars',
    kid: `dev-${randomUUID()}`,
    algorithm: 'ES256',
    privateKey,
    publicJwk: await exportJWK(publicKey),
  });
}
