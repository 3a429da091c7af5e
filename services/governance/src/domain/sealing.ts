import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest: AES-256-GCM under the key-encryption key (KEK), with what
 * the record is bound to as additional authenticated data so that it cannot
 * be moved: (tenant, provider) for provider keys, (tenant, purpose, context)
 * for the secrets other services have sealed (`_governance.seal_secret`).
 */

/** Bytes of an AES-256 key. */
export const KEK_BYTES = 32;
const IV_BYTES = 12;

/** A sealed secret as stored: base64 parts and the id of the KEK that sealed it. */
export interface SealedSecret {
  readonly ciphertext: string;
  readonly iv: string;
  readonly tag: string;
  /** {@link keyEncryptionKeyId} of the sealing KEK. */
  readonly kek_id: string;
}

/**
 * Decodes a configured KEK: 64 hex digits, or base64/base64url of 32 bytes.
 * Undefined for anything else.
 */
export function decodeKeyEncryptionKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return undefined;
  const bytes = Buffer.from(value.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
  return bytes.length === KEK_BYTES ? bytes : undefined;
}

/** A non-secret id of a KEK (first 16 hex digits of its SHA-256), safe to log and store. */
export function keyEncryptionKeyId(kek: Buffer): string {
  return createHash('sha256').update(kek).digest('hex').slice(0, 16);
}

/**
 * The additional authenticated data: the JSON array of what a record is bound
 * to. Arrays of different lengths never collide, so a provider key
 * (`[tenant, provider]`) and a caller's secret (`[tenant, purpose, context]`)
 * never open as each other.
 */
function aad(binding: readonly string[]): Buffer {
  return Buffer.from(JSON.stringify(binding), 'utf8');
}

/** Seals `secret` under `kek`, bound to `binding` (additional authenticated data). */
export function sealBound(kek: Buffer, secret: string, binding: readonly string[]): SealedSecret {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(aad(binding));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return {
    ciphertext: ciphertext.toString('base64'),
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    kek_id: keyEncryptionKeyId(kek),
  };
}

/**
 * Opens a record {@link sealBound} sealed for the same `binding`. Throws when
 * the KEK differs from the sealing one, the binding differs, or the record
 * was tampered with (GCM authentication fails).
 */
export function openBound(kek: Buffer, sealed: SealedSecret, binding: readonly string[]): string {
  const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(aad(binding));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
}

/** Seals `secret` for (tenant, provider) under `kek`. */
export function sealSecret(kek: Buffer, secret: string, tenant: string, provider: string): SealedSecret {
  return sealBound(kek, secret, [tenant, provider]);
}

/**
 * Opens a sealed secret. Throws when the KEK differs from the sealing one or
 * the record was tampered with (GCM authentication fails).
 */
export function openSecret(kek: Buffer, sealed: SealedSecret, tenant: string, provider: string): string {
  return openBound(kek, sealed, [tenant, provider]);
}
