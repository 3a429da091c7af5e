import { decodeProtectedHeader, jwtVerify } from 'jose';
import type { JWK, ProtectedHeaderParameters, RemoteJWKSetOptions } from 'jose';
import { isSigningAlgorithm, resolveAlgorithmAllowlist } from './algorithms.ts';
import type { SigningAlgorithm } from './algorithms.ts';
import { authRejected, toAuthRejection } from './auth-rejection.ts';
import { createLocalKeyResolver, createRemoteKeyResolver } from './key-resolver.ts';
import type { KeyLookupHeader, KeyResolver } from './key-resolver.ts';
import { readTokenClaims } from './token-claims.ts';
import type { TokenClaims } from './token-claims.ts';

/** Default tolerance for `exp` and `nbf`, in seconds: absorbs small clock skew between issuer and service. */
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;

/**
 * The runtime's identity configuration. Key source precedence:
 * `keyResolver`, then `jwksUrl`, then `keys`; at least one is required.
 */
export interface TokenVerifierConfig {
  /** Expected `iss`, compared exactly. */
  readonly issuer: string;
  /** Expected `aud`, compared exactly (a token `aud` array must contain it). */
  readonly audience: string;
  /** The identity provider's JWKS document, fetched and cached by jose. */
  readonly jwksUrl?: string | URL;
  /** Options for the remote JWKS (timeouts, cooldown, cache age, headers). */
  readonly jwksOptions?: RemoteJWKSetOptions;
  /** Local public keys, each with a distinct `kid`; used when no `jwksUrl` is set. */
  readonly keys?: readonly JWK[];
  /** A custom key source; takes precedence over `jwksUrl` and `keys`. */
  readonly keyResolver?: KeyResolver;
  /**
   * Allowed signing algorithms (`jwt_algorithms`): a non-empty subset of
   * RS256, RS384, RS512, ES256, ES384, ES512.
   * @default all six
   */
  readonly algorithms?: readonly SigningAlgorithm[];
  /**
   * Clock tolerance for `exp` and `nbf`, in seconds.
   * @default 30 ({@link DEFAULT_CLOCK_TOLERANCE_SECONDS})
   */
  readonly clockToleranceSeconds?: number;
  /** The clock, for tests. @default () => new Date() */
  readonly now?: () => Date;
}

/** Verifies connection tokens. */
export interface TokenVerifier {
  /**
   * Verifies a compact JWS and returns its service claims.
   * @throws ServiceError `auth_rejected` naming the failed check.
   */
  verify(token: string): Promise<TokenClaims>;
}

function pickKeyResolver(config: TokenVerifierConfig): KeyResolver {
  if (config.keyResolver !== undefined) return config.keyResolver;
  if (config.jwksUrl !== undefined) return createRemoteKeyResolver(config.jwksUrl, config.jwksOptions);
  if (config.keys !== undefined) return createLocalKeyResolver(config.keys);
  throw new Error('token verifier: configure jwksUrl, keys or keyResolver');
}

function decodeHeader(token: unknown): ProtectedHeaderParameters {
  if (typeof token !== 'string' || token === '') throw authRejected('malformed', 'empty token');
  try {
    return decodeProtectedHeader(token);
  } catch (error) {
    throw authRejected('malformed', 'the token header cannot be decoded', error);
  }
}

/**
 * The allowlist gate: runs on the decoded, still unverified, header before
 * any key is looked up, so `HS*` and `none` never reach a key source.
 */
function checkHeader(header: ProtectedHeaderParameters, allowed: ReadonlySet<SigningAlgorithm>): KeyLookupHeader {
  const { alg, kid } = header;
  if (!isSigningAlgorithm(alg) || !allowed.has(alg)) {
    throw authRejected('algorithm', `${typeof alg === 'string' ? alg : 'a missing alg'} is not allowed`);
  }
  if (kid !== undefined && (typeof kid !== 'string' || kid === '')) throw authRejected('kid', 'the kid is malformed');
  return kid === undefined ? { alg } : { alg, kid };
}

/**
 * Builds the connection-token verifier. Order of checks: header decoding,
 * algorithm allowlist, key lookup by `kid`, signature, then `iss`, `aud`,
 * `exp` (required), `nbf`, then the service claims. Every failure is a
 * ServiceError `auth_rejected` whose message starts with the failed check.
 *
 * @throws Error at creation for a bad configuration (no key source, an
 *   algorithm outside the six, a local key without kid).
 */
export function createTokenVerifier(config: TokenVerifierConfig): TokenVerifier {
  const allowed = resolveAlgorithmAllowlist(config.algorithms);
  const resolveKey = pickKeyResolver(config);
  const options = {
    issuer: config.issuer,
    audience: config.audience,
    algorithms: [...allowed],
    clockTolerance: config.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS,
    requiredClaims: ['exp'],
  };
  return {
    async verify(token) {
      const header = checkHeader(decodeHeader(token), allowed);
      try {
        const currentDate = config.now?.();
        const { payload } = await jwtVerify(token, () => resolveKey(header), { ...options, currentDate });
        return readTokenClaims(payload, header.kid);
      } catch (error) {
        throw toAuthRejection(error);
      }
    },
  };
}
