import { createHash } from 'node:crypto';

/**
 * Fingerprints: what may be shown, stored in clear and published in place of
 * a secret.
 */

/** `sha256:<first 16 hex digits>` of a provider key (the GovernanceRotateKeyResponse format). */
export function keyFingerprint(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('hex').slice(0, 16)}`;
}

/**
 * A token fingerprint as the gateway sends it: the full SHA-256 of the
 * compact token, 64 lowercase hex digits, optionally prefixed `sha256:`.
 * Returns the 64 hex digits, or undefined when malformed.
 */
export function normaliseTokenFingerprint(text: string): string | undefined {
  const hex = text.startsWith('sha256:') ? text.slice('sha256:'.length) : text;
  return /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
}

/** The short, loggable form of a token fingerprint: `sha256:<first 16 hex digits>`. */
export function shortTokenFingerprint(hex: string): string {
  return `sha256:${hex.slice(0, 16)}`;
}
