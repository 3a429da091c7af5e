import { createRemoteJWKSet, errors, importJWK } from 'jose';
import type { CryptoKey, JWK, RemoteJWKSetOptions } from 'jose';
import type { SigningAlgorithm } from './algorithms.ts';
import { authRejected } from './auth-rejection.ts';

/** The protected-header members a key lookup may use. */
export interface KeyLookupHeader {
  /** Already checked against the algorithm allowlist. */
  readonly alg: SigningAlgorithm;
  readonly kid?: string;
}

/**
 * Finds the public key that verifies a token. Called only after the
 * algorithm allowlist accepted the header. Throws an `auth_rejected`
 * ServiceError (reason `kid`) when no key matches.
 */
export type KeyResolver = (header: KeyLookupHeader) => Promise<CryptoKey>;

const KEY_FAMILY: Readonly<Record<SigningAlgorithm, { kty: string; crv?: string }>> = {
  RS256: { kty: 'RSA' },
  RS384: { kty: 'RSA' },
  RS512: { kty: 'RSA' },
  ES256: { kty: 'EC', crv: 'P-256' },
  ES384: { kty: 'EC', crv: 'P-384' },
  ES512: { kty: 'EC', crv: 'P-521' },
};

function keyFitsAlgorithm(jwk: JWK, alg: SigningAlgorithm): boolean {
  const family = KEY_FAMILY[alg];
  if (jwk.kty !== family.kty) return false;
  if (family.crv !== undefined && jwk.crv !== family.crv) return false;
  return jwk.alg === undefined || jwk.alg === alg;
}

function indexByKid(keys: readonly JWK[]): ReadonlyMap<string, JWK> {
  const byKid = new Map<string, JWK>();
  for (const jwk of keys) {
    if (typeof jwk.kid !== 'string' || jwk.kid === '') throw new Error('auth keys: every local JWK needs a kid');
    if (byKid.has(jwk.kid)) throw new Error(`auth keys: duplicate kid ${jwk.kid}`);
    if (jwk.d !== undefined) throw new Error(`auth keys: ${jwk.kid} is a private key; configure public keys only`);
    byKid.set(jwk.kid, jwk);
  }
  return byKid;
}

/**
 * A resolver over a fixed set of public JWKs, looked up by `kid`. A token
 * without a kid or with a kid outside the set is rejected (`kid`); a key
 * whose type, curve or declared `alg` does not fit the token's algorithm is
 * rejected (`algorithm`). Imported keys are cached per kid and algorithm.
 *
 * @throws Error at creation when a key has no kid, a kid repeats, or a key is private.
 */
export function createLocalKeyResolver(keys: readonly JWK[]): KeyResolver {
  const byKid = indexByKid(keys);
  const imported = new Map<string, Promise<CryptoKey>>();
  return async ({ alg, kid }) => {
    if (kid === undefined) throw authRejected('kid', 'the token header has no kid');
    const jwk = byKid.get(kid);
    if (jwk === undefined) throw authRejected('kid', 'unknown kid');
    if (!keyFitsAlgorithm(jwk, alg)) throw authRejected('algorithm', `the key named by kid cannot verify ${alg}`);
    const cacheKey = `${alg} ${kid}`;
    let key = imported.get(cacheKey);
    if (key === undefined) {
      key = importJWK(jwk, alg) as Promise<CryptoKey>;
      imported.set(cacheKey, key);
    }
    return key;
  };
}

/**
 * A resolver over a remote JWKS document (the identity provider's
 * `jwks_uri`), using jose's caching `createRemoteJWKSet`. A token without a
 * kid is rejected (`kid`) before any fetch; a kid the set does not hold, or a
 * set that cannot be fetched, is rejected (`kid`).
 *
 * @param options - passed to jose (timeouts, cooldown, cache age, headers).
 */
export function createRemoteKeyResolver(jwksUrl: string | URL, options?: RemoteJWKSetOptions): KeyResolver {
  const jwks = createRemoteJWKSet(new URL(jwksUrl), options);
  return async ({ alg, kid }) => {
    if (kid === undefined) throw authRejected('kid', 'the token header has no kid');
    try {
      return await jwks({ alg, kid });
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey) throw authRejected('kid', 'unknown kid', error);
      if (error instanceof errors.JWKSMultipleMatchingKeys) throw authRejected('kid', 'the kid is ambiguous', error);
      throw authRejected('kid', 'the signing key set could not be loaded', error);
    }
  };
}
