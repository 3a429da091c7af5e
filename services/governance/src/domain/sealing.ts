import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Provider keys at rest: AES-256-GCM under the key-encryption key (KEK), with
 * the (tenant, provider) pair as additional authenticated data so that a
 * sealed record cannot be moved to another tenant or provider.
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

function aad(tenant: string, provider: string): Buffer {
  return Buffer.from(JSON.stringify([tenant, provider]), 'utf8');
}

/** Seals `secret` for (tenant, provider) under `kek`. */
export function sealSecret(kek: Buffer, secret: string, tenant: string, provider: string): SealedSecret {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(aad(tenant, provider));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return {
    ciphertext: ciphertext.toString('base64'),
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    kek_id: keyEncryptionKeyId(kek),
  };
}

/**
 * Opens a sealed secret. Throws when the KEK differs from the sealing one or
 * the record was tampered with (GCM authentication fails).
 */
export function openSecret(kek: Buffer, sealed: SealedSecret, tenant: string, provider: string): string {
  const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(aad(tenant, provider));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
}
