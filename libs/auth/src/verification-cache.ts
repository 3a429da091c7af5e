import { createHash } from 'node:crypto';
import type { TokenClaims } from './token-claims.ts';
import type { TokenVerifier } from './token-verifier.ts';

/** Options of {@link cacheVerifications}. */
export interface VerificationCacheOptions {
  /** Most tokens remembered at once; the least recently used goes first. @default 10000 */
  readonly maxEntries?: number;
  /**
   * Longest time a verification is reused, in seconds, whatever the token's
   * `exp` says; bounds how long a key removed from the JWKS keeps working.
   * @default 60
   */
  readonly maxAgeSeconds?: number;
  /** Clock in milliseconds since the epoch (tests). @default Date.now */
  readonly now?: () => number;
}

interface Entry {
  readonly claims: TokenClaims;
  readonly expiresAtMs: number;
}

/**
 * Wraps a verifier so that a token verified once is not verified again on
 * every request: signature checks (ES256/RS256 through WebCrypto) dominate an
 * authenticated round trip. Only successes are remembered, keyed by a SHA-256
 * of the token, until the earlier of the token's `exp` and `maxAgeSeconds`.
 * Failures always go to the wrapped verifier, so a refused token stays refused.
 */
export function cacheVerifications(verifier: TokenVerifier, options: VerificationCacheOptions = {}): TokenVerifier {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxAgeMs = (options.maxAgeSeconds ?? 60) * 1000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  return {
    async verify(token: string): Promise<TokenClaims> {
      const key = createHash('sha256').update(token).digest('base64url');
      const cached = entries.get(key);
      const at = now();
      if (cached !== undefined) {
        entries.delete(key);
        if (cached.expiresAtMs > at) {
          entries.set(key, cached); // most recently used goes last
          return cached.claims;
        }
      }
      const claims = await verifier.verify(token);
      const expiresAtMs = Math.min(at + maxAgeMs, claims.exp === undefined ? at : claims.exp * 1000);
      if (expiresAtMs > at) {
        entries.set(key, { claims, expiresAtMs });
        if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
      }
      return claims;
    },
  };
}
