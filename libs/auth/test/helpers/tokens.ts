import { SignJWT, base64url, exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK, JWTPayload } from 'jose';
import type { VerifiedIdentity } from '@ars/contracts';

/** A generated signing key with its public JWK (kid set). */
export interface TestKey {
  readonly alg: string;
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

export const ISSUER = 'https://idp.test';
export const AUDIENCE = 'ars';

export async function generateTestKey(alg: string, kid = `kid-${alg.toLowerCase()}`): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { modulusLength: 2048 });
  return { alg, kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid } };
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Service claims plus standard ones; override anything per test. */
export function claimsFor(overrides: JWTPayload = {}): JWTPayload {
  return {
    tenant: 'acme',
    user: 'alice',
    session: 's-1',
    scopes: ['console:fleet'],
    iss: ISSUER,
    aud: AUDIENCE,
    iat: nowSeconds(),
    exp: nowSeconds() + 600,
    ...overrides,
  };
}

/** Signs `payload` with `key`; `header` may override alg and kid. */
export async function signToken(
  key: TestKey,
  payload: JWTPayload = claimsFor(),
  header: { alg?: string; kid?: string | undefined } = {},
): Promise<string> {
  const protectedHeader: { alg: string; kid?: string } = { alg: header.alg ?? key.alg };
  const kid = 'kid' in header ? header.kid : key.kid;
  if (kid !== undefined) protectedHeader.kid = kid;
  return new SignJWT(payload).setProtectedHeader(protectedHeader).sign(key.privateKey);
}

/** An HMAC-signed token (never acceptable to the service). */
export async function signHmacToken(alg: 'HS256' | 'HS384' | 'HS512', kid: string): Promise<string> {
  const secret = new TextEncoder().encode('a-shared-secret-that-is-long-enough-for-hs512-0123456789abcdef');
  return new SignJWT(claimsFor()).setProtectedHeader({ alg, kid }).sign(secret);
}

/** A token whose header and signature segments are written by hand. */
export function rawToken(header: Record<string, unknown>, payload: JWTPayload = claimsFor(), signature = ''): string {
  const encode = (value: unknown): string => base64url.encode(JSON.stringify(value));
  return `${encode(header)}.${encode(payload)}.${signature}`;
}

/** Verified identities used across the pure-function tests. */
export function identity(overrides: Partial<VerifiedIdentity> = {}): VerifiedIdentity {
  return { tenant: 'acme', user: 'alice', session: 's-1', scopes: [], ...overrides };
}

export const PLAIN = identity();
export const FLEET = identity({ scopes: ['console:fleet'] });
export const ADMIN = identity({ scopes: ['admin'] });
