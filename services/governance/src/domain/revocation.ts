/**
 * The layout of the `ars_revocations` KV bucket, shared with the gateway
 * (which reads it on every request): one entry per revoked token, under
 * every key it can be recognised by.
 *
 * - `fp.<64 lowercase hex>`: SHA-256 of the compact token string (always written).
 * - `jti.<base64url(jti), no padding>`: the token's `jti` claim (written when it has one).
 *
 * The value is the JSON of {@link RevocationEntry}. An entry whose
 * `expires_at` has passed may be ignored or deleted: the token is expired anyway.
 */

/** Prefix of the fingerprint key. */
export const FINGERPRINT_KEY_PREFIX = 'fp.';
/** Prefix of the token-id key. */
export const TOKEN_ID_KEY_PREFIX = 'jti.';

/** The value stored under every key of a revoked token. */
export interface RevocationEntry {
  readonly reason: 'rotated';
  readonly revoked_at: string;
  /** When the revoked token expires anyway (RFC 3339). */
  readonly expires_at: string;
  readonly tenant: string;
  readonly user: string;
  readonly rotation_id: string;
  /** The id (jti) of the token that replaced it. */
  readonly replaced_by: string;
}

/** The KV key of a token fingerprint (64 hex digits). */
export function fingerprintKey(fingerprintHex: string): string {
  return `${FINGERPRINT_KEY_PREFIX}${fingerprintHex}`;
}

/** The KV key of a token id (any string; KV keys allow only a small alphabet, hence base64url). */
export function tokenIdKey(tokenId: string): string {
  return `${TOKEN_ID_KEY_PREFIX}${Buffer.from(tokenId, 'utf8').toString('base64url')}`;
}

/** Every key a revoked token is written under. */
export function revocationKeys(fingerprintHex: string, tokenId: string | undefined): string[] {
  return tokenId === undefined
    ? [fingerprintKey(fingerprintHex)]
    : [fingerprintKey(fingerprintHex), tokenIdKey(tokenId)];
}
