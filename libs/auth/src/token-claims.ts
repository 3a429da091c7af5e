import type { JWTPayload } from 'jose';
import { authRejected } from './auth-rejection.ts';

/**
 * The service claims of a verified connection token. Tenant and user are
 * authority; `session` is only the default conversation (the
 * `X-Service-Session` header replaces it); `scopes` may be empty.
 */
export interface TokenClaims {
  readonly tenant: string;
  readonly user: string;
  /** Default session when the request sends no `X-Service-Session`. */
  readonly session?: string;
  readonly scopes: readonly string[];
  /** The `kid` of the key that verified the token. */
  readonly kid?: string;
  readonly iss?: string;
  readonly sub?: string;
  /** Expiry, seconds since the epoch (the verified `exp`). */
  readonly exp?: number;
  /** The token's id (`jti`), when the issuer sets one; revocations name it. */
  readonly jti?: string;
}

function requiredString(payload: JWTPayload, name: 'tenant' | 'user'): string {
  const value = payload[name];
  if (typeof value !== 'string' || value === '') {
    throw authRejected('claims', `the ${name} claim must be a non-empty string`);
  }
  return value;
}

function optionalSession(payload: JWTPayload): string | undefined {
  const value = payload.session;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') {
    throw authRejected('claims', 'the session claim must be a non-empty string when present');
  }
  return value;
}

function scopeList(payload: JWTPayload): readonly string[] {
  const value = payload.scopes;
  // An absent claim grants nothing; a present one must have the spec's shape.
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value) || !value.every((scope) => typeof scope === 'string')) {
    throw authRejected('claims', 'the scopes claim must be an array of strings');
  }
  return Object.freeze([...(value as string[])]);
}

/**
 * Reads and shape-checks the service claims of an already verified payload.
 * `tenant` and `user` are required non-empty strings; `session` is optional
 * but non-empty when present; `scopes` is an array of strings (absent means
 * `[]`). Any other shape is rejected with reason `claims`.
 *
 * @param kid - the verifying key's id, copied into the result.
 */
export function readTokenClaims(payload: JWTPayload, kid?: string): TokenClaims {
  const session = optionalSession(payload);
  return Object.freeze({
    tenant: requiredString(payload, 'tenant'),
    user: requiredString(payload, 'user'),
    ...(session === undefined ? {} : { session }),
    scopes: scopeList(payload),
    ...(kid === undefined ? {} : { kid }),
    ...(payload.iss === undefined ? {} : { iss: payload.iss }),
    ...(payload.sub === undefined ? {} : { sub: payload.sub }),
    ...(typeof payload.exp === 'number' ? { exp: payload.exp } : {}),
    ...(typeof payload.jti === 'string' && payload.jti !== '' ? { jti: payload.jti } : {}),
  });
}
