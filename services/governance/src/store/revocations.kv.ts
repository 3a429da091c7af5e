import { openKv, REVOCATIONS_BUCKET } from '@ars/bus';
import type { Bus } from '@ars/bus';
import type { RevocationEntry } from '../domain/revocation.ts';

/** Writes revocations to the `ars_revocations` KV bucket, which every gateway replica reads. */
export interface RevocationWriter {
  /** Puts `entry` under every key; resolves once JetStream stored them all. */
  revoke(keys: readonly string[], entry: RevocationEntry): Promise<void>;
}

/** Opens the bucket (created by `ensureInfrastructure` at boot). */
export async function openRevocationWriter(bus: Bus): Promise<RevocationWriter> {
  const kv = await openKv(bus, REVOCATIONS_BUCKET);
  return {
    async revoke(keys, entry) {
      const value = JSON.stringify(entry);
      for (const key of keys) await kv.put(key, value);
    },
  };
}
