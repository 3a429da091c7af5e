import type { TokenVerifier } from '../ports.ts';

/** The `kid` of a compact JWS header, read without verifying anything; undefined when unreadable. */
export function headerKid(token: string): string | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  try {
    const header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8')) as unknown;
    const kid = (header as { kid?: unknown } | null)?.kid;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Production with a rotation key: tokens the gateway issued (header `kid` of
 * its rotation key) go to the rotation issuer's verifier, every other token
 * to the identity provider's. The header only picks the verifier; the chosen
 * one checks algorithm, key, signature, issuer, audience and expiry itself.
 */
export function routeByKid(primary: TokenVerifier, own: { kid: string; verifier: TokenVerifier }): TokenVerifier {
  return {
    verify: (token) => (headerKid(token) === own.kid ? own.verifier.verify(token) : primary.verify(token)),
  };
}
