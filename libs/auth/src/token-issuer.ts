import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint } from 'jose';
import type { CryptoKey, JSONWebKeySet, JWK } from 'jose';
import type { SigningAlgorithm } from './algorithms.ts';
import { createTokenVerifier } from './token-verifier.ts';
import type { TokenVerifier } from './token-verifier.ts';

/** What a minted connection token says. */
export interface TokenRequest {
  readonly tenant: string;
  readonly user: string;
  /** The default session claim; omitted means the header must name one. */
  readonly session?: string;
  /** @default [] */
  readonly scopes?: readonly string[];
  /** Lifetime in seconds (a positive integer). @default 43200 (12 h) */
  readonly ttlSeconds?: number;
}

/** A minted token with the claims a revocation or a one-time reveal needs. */
export interface IssuedToken {
  /** The compact JWS. A secret: never log it. */
  readonly token: string;
  /** Its `jti` (a random UUID): safe to log. */
  readonly jti: string;
  /** `iat`, seconds since the epoch. */
  readonly issuedAt: number;
  /** `exp`, seconds since the epoch. */
  readonly expiresAt: number;
}

/** Signs connection tokens with one asymmetric key and verifies its own tokens. */
export interface TokenIssuer {
  readonly issuer: string;
  readonly audience: string;
  /** The `kid` of the signing key. */
  readonly kid: string;
  /** The public half, as a JWKS document (what an OIDC `jwks_uri` would serve). */
  readonly publicJwks: JSONWebKeySet;
  /** A verifier that accepts exactly this issuer's tokens (its one algorithm). */
  readonly verifier: TokenVerifier;
  /** Signs a token for the given identity. */
  mint(request: TokenRequest): Promise<string>;
  /** Like {@link TokenIssuer.mint}, also answering the token's id and lifetime. */
  issue(request: TokenRequest): Promise<IssuedToken>;
}

/** Default lifetime of a minted token: 12 hours, in seconds. */
export const DEFAULT_TOKEN_TTL_SECONDS = 12 * 60 * 60;

/** Options of {@link createTokenIssuer}. */
export interface TokenIssuerOptions {
  readonly issuer: string;
  readonly audience: string;
  /**
   * The private signing key: PKCS#8 (or SEC1/PKCS#1) PEM text, or a private
   * JWK. EC P-256, P-384 or P-521, or RSA of at least 2048 bits.
   */
  readonly signingKey: string | JWK;
  /** The key id put in every token header. @default the RFC 7638 thumbprint of the public key */
  readonly kid?: string;
  /** For an RSA key: RS256, RS384 or RS512. @default RS256 (EC keys follow their curve) */
  readonly rsaAlgorithm?: 'RS256' | 'RS384' | 'RS512';
}

const CURVE_ALGORITHMS: Readonly<Record<string, SigningAlgorithm>> = {
  prime256v1: 'ES256',
  secp384r1: 'ES384',
  secp521r1: 'ES512',
};

function importPrivateKey(signingKey: string | JWK): KeyObject {
  try {
    return typeof signingKey === 'string'
      ? createPrivateKey({ key: signingKey, format: 'pem' })
      : createPrivateKey({ key: signingKey as JsonWebKey, format: 'jwk' });
  } catch (error) {
    throw new Error('token issuer: the signing key is not a readable private key (PEM or JWK)', { cause: error });
  }
}

function algorithmOf(key: KeyObject, rsaAlgorithm: SigningAlgorithm): SigningAlgorithm {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'ec') {
    const alg = CURVE_ALGORITHMS[details.namedCurve ?? ''];
    if (alg === undefined) throw new Error(`token issuer: EC curve ${details.namedCurve} is not supported`);
    return alg;
  }
  if (key.asymmetricKeyType === 'rsa') {
    if ((details.modulusLength ?? 0) < 2048) throw new Error('token issuer: an RSA key needs at least 2048 bits');
    return rsaAlgorithm;
  }
  throw new Error(`token issuer: ${key.asymmetricKeyType} keys are not supported (EC or RSA only)`);
}

function assertNonEmpty(name: string, value: unknown): void {
  if (typeof value !== 'string' || value === '')
    throw new TypeError(`token issuer: ${name} must be a non-empty string`);
}

/**
 * Builds an issuer around a signing key already in hand. The minted token
 * carries `iss`, `aud`, `sub` (= user), `jti` (random UUID), `iat`, `exp`,
 * `tenant`, `user`, `session` (when given) and `scopes`.
 */
export function issuerFromKey(options: {
  readonly issuer: string;
  readonly audience: string;
  readonly kid: string;
  readonly algorithm: SigningAlgorithm;
  readonly privateKey: KeyObject | CryptoKey;
  readonly publicJwk: JWK;
}): TokenIssuer {
  const { issuer, audience, kid, algorithm } = options;
  const publicJwk: JWK = { ...options.publicJwk, kid, alg: algorithm, use: 'sig' };
  const verifier = createTokenVerifier({ issuer, audience, keys: [publicJwk], algorithms: [algorithm] });

  async function issue(request: TokenRequest): Promise<IssuedToken> {
    assertNonEmpty('tenant', request.tenant);
    assertNonEmpty('user', request.user);
    if (request.session !== undefined) assertNonEmpty('session', request.session);
    const ttl = request.ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
    if (!Number.isInteger(ttl) || ttl <= 0) throw new TypeError('token issuer: ttlSeconds must be a positive integer');
    const claims = {
      tenant: request.tenant,
      user: request.user,
      ...(request.session === undefined ? {} : { session: request.session }),
      scopes: [...(request.scopes ?? [])],
    };
    const issuedAt = Math.floor(Date.now() / 1000);
    const jti = randomUUID();
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: algorithm, kid, typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(request.user)
      .setJti(jti)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ttl)
      .sign(options.privateKey);
    return { token, jti, issuedAt, expiresAt: issuedAt + ttl };
  }

  return Object.freeze({
    issuer,
    audience,
    kid,
    publicJwks: { keys: [publicJwk] },
    verifier,
    issue,
    mint: async (request: TokenRequest) => (await issue(request)).token,
  });
}

/**
 * An issuer of connection tokens signed with a configured key, for a
 * deployment that issues its own tokens beside an external identity provider
 * (the gateway's rotated tokens). Every replica sharing the key verifies
 * every other replica's tokens.
 *
 * @throws Error for a key that cannot be read or is not EC/RSA ≥ 2048.
 */
export async function createTokenIssuer(options: TokenIssuerOptions): Promise<TokenIssuer> {
  assertNonEmpty('issuer', options.issuer);
  assertNonEmpty('audience', options.audience);
  const privateKey = importPrivateKey(options.signingKey);
  const algorithm = algorithmOf(privateKey, options.rsaAlgorithm ?? 'RS256');
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const kid = options.kid ?? (await calculateJwkThumbprint(publicJwk));
  return issuerFromKey({
    issuer: options.issuer,
    audience: options.audience,
    kid,
    algorithm,
    privateKey,
    publicJwk,
  });
}
