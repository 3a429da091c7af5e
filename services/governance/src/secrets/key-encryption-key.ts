import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '@ars/telemetry';
import { decodeKeyEncryptionKey, KEK_BYTES, keyEncryptionKeyId } from '../domain/sealing.ts';

/** The file a dev deployment keeps its generated key-encryption key in, under `DATA_DIR`. */
export const DEV_KEK_FILE = join('governance', 'key-encryption.key');

/** The key-encryption key in use, and where it came from (logged, never the key). */
export interface KeyEncryptionKey {
  readonly key: Buffer;
  /** Non-secret id, stored with every sealed record. */
  readonly id: string;
  readonly source: 'config' | 'file' | 'generated';
}

/** What {@link loadKeyEncryptionKey} reads of the config. */
export interface KekConfig {
  readonly GOVERNANCE_KEY_ENCRYPTION_KEY?: string | undefined;
  readonly DATA_DIR: string;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

function isExisting(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'EEXIST';
}

async function readKeyFile(path: string): Promise<Buffer> {
  const key = decodeKeyEncryptionKey(await readFile(path, 'utf8'));
  if (key === undefined) throw new Error(`${path} does not hold a ${KEK_BYTES}-byte key (base64)`);
  return key;
}

/**
 * The configured `GOVERNANCE_KEY_ENCRYPTION_KEY`; when unset (dev only: the
 * config refuses that in production), the key in `DATA_DIR/governance/key-encryption.key`,
 * generated there (mode 0600, base64) on first boot. Two processes booting at
 * once agree: the second reads the file the first created.
 */
export async function loadKeyEncryptionKey(config: KekConfig, logger: Logger): Promise<KeyEncryptionKey> {
  if (config.GOVERNANCE_KEY_ENCRYPTION_KEY !== undefined) {
    const key = decodeKeyEncryptionKey(config.GOVERNANCE_KEY_ENCRYPTION_KEY);
    if (key === undefined) throw new Error('GOVERNANCE_KEY_ENCRYPTION_KEY is not a 32-byte key');
    return { key, id: keyEncryptionKeyId(key), source: 'config' };
  }
  const path = join(config.DATA_DIR, DEV_KEK_FILE);
  try {
    const key = await readKeyFile(path);
    return { key, id: keyEncryptionKeyId(key), source: 'file' };
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  const key = randomBytes(KEK_BYTES);
  await mkdir(dirname(path), { recursive: true });
  try {
    await writeFile(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if (!isExisting(error)) throw error;
    const existing = await readKeyFile(path);
    return { key: existing, id: keyEncryptionKeyId(existing), source: 'file' };
  }
  const id = keyEncryptionKeyId(key);
  logger.warn(
    { path, kekId: id },
    'generated a development key-encryption key; set GOVERNANCE_KEY_ENCRYPTION_KEY in production',
  );
  return { key, id, source: 'generated' };
}
