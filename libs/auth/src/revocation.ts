import { createHash } from 'node:crypto';
import { authRejected } from './auth-rejection.ts';
import type { ServiceError } from '@ars/contracts';

/**
 * Revoked connection tokens, as the `ars_revocations` KV bucket holds them
 * (written by governance's `_governance.record_token_rotation`, read by every
 * gateway replica on every request). One entry per revoked token under every
 * key it can be recognised by:
 *
 * - `fp.<64 lowercase hex>`: SHA-256 of the compact token string (always);
 * - `jti.<base64url(jti), unpadded>`: the token's `jti` claim (when it has one).
 *
 * The value is the JSON of {@link RevocationEntry}.
 */

/** Prefix of the fingerprint key. */
export const FINGERPRINT_KEY_PREFIX = 'fp.';
/** Prefix of the token-id key. */
export const TOKEN_ID_KEY_PREFIX = 'jti.';

/** The value stored under every key of a revoked token. */
export interface RevocationEntry {
  /** Why: `rotated` for auth.rotate_token. */
  readonly reason: string;
  /** RFC 3339. */
  readonly revoked_at: string;
  /** When the revoked token expires anyway (RFC 3339); the entry may be forgotten after it. */
  readonly expires_at: string;
  readonly tenant: string;
  readonly user: string;
  readonly rotation_id?: string;
  /** The id (jti) of the token that replaced it. */
  readonly replaced_by?: string;
}

/** SHA-256 of the compact token string, 64 lowercase hex digits: the token's fingerprint. */
export function tokenFingerprint(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The KV key of a token fingerprint (64 hex digits). */
export function fingerprintKey(fingerprintHex: string): string {
  return `${FINGERPRINT_KEY_PREFIX}${fingerprintHex}`;
}

/** The KV key of a token id; KV keys allow a small alphabet, hence unpadded base64url. */
export function tokenIdKey(tokenId: string): string {
  return `${TOKEN_ID_KEY_PREFIX}${Buffer.from(tokenId, 'utf8').toString('base64url')}`;
}

/**
 * Every key a token is recognised by: its fingerprint key, then its token-id
 * key when it has a `jti`. A token is revoked when any of them is.
 */
export function revocationKeys(token: { readonly fingerprint: string; readonly jti?: string | undefined }): string[] {
  const keys = [fingerprintKey(token.fingerprint)];
  if (token.jti !== undefined && token.jti !== '') keys.push(tokenIdKey(token.jti));
  return keys;
}

function isInstant(value: unknown): value is string {
  return typeof value === 'string' && !Number.isNaN(Date.parse(value));
}

/**
 * Reads a stored entry; `undefined` for anything that is not one (a reader
 * must then decide; the gateway treats an unreadable entry under a token's
 * key as a revocation, failing closed).
 */
export function parseRevocationEntry(text: string): RevocationEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const entry = value as Record<string, unknown>;
  if (typeof entry.reason !== 'string' || !isInstant(entry.revoked_at) || !isInstant(entry.expires_at)) {
    return undefined;
  }
  if (typeof entry.tenant !== 'string' || typeof entry.user !== 'string') return undefined;
  return entry as unknown as RevocationEntry;
}

/**
 * Whether an entry still matters at `nowMs`: until the revoked token's own
 * expiry (after it the token fails verification anyway). An `expires_at`
 * that cannot be read keeps the entry forever.
 */
export function isRevocationLive(entry: Pick<RevocationEntry, 'expires_at'>, nowMs: number): boolean {
  const expiresAt = Date.parse(entry.expires_at);
  return Number.isNaN(expiresAt) || expiresAt > nowMs;
}

/** The 401 `auth_rejected` of a token that verified but was revoked (message `revoked: …`). */
export function tokenRevoked(): ServiceError {
  return authRejected('revoked', 'the token was revoked (rotated); use the token that replaced it');
}
