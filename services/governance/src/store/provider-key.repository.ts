import type { IdentityQuad } from '@ars/contracts';
import type { Store, StoreDocument } from '@ars/store';
import type { SealedSecret } from '../domain/sealing.ts';

/** A provider key of a tenant, sealed (`_id` = JSON `[tenant, provider]`). */
interface ProviderKeyDocument extends StoreDocument {
  tenant: string;
  provider: string;
  sealed: SealedSecret;
  fingerprint: string;
  rotated_at: string;
  rotated_by: IdentityQuad;
  previous_fingerprint?: string;
  rotations: number;
}

/** What may be shown of an installed key: never the secret. */
export interface ProviderKeySummary {
  readonly provider: string;
  readonly fingerprint: string;
  readonly rotated_at: string;
  readonly rotations: number;
}

/** An installed key with its sealed secret (for the engine's decrypting read only). */
export interface SealedProviderKey extends ProviderKeySummary {
  readonly tenant: string;
  readonly sealed: SealedSecret;
}

/** Provider keys per (tenant, provider). */
export interface ProviderKeyRepository {
  /** Installs or replaces the key; returns the replaced key's fingerprint, if any. */
  put(
    key: { tenant: string; provider: string; sealed: SealedSecret; fingerprint: string },
    actor: IdentityQuad,
    at: string,
  ): Promise<{ previous_fingerprint?: string }>;
  get(tenant: string, provider: string): Promise<SealedProviderKey | undefined>;
  /** The tenant's keys, without secrets, by provider name. */
  list(tenant: string): Promise<ProviderKeySummary[]>;
}

const idOf = (tenant: string, provider: string) => JSON.stringify([tenant, provider]);

/** The store-backed provider key repository (collection `provider_keys`). */
export function createProviderKeyRepository(store: Store): ProviderKeyRepository {
  const collection = store.collection<ProviderKeyDocument>('provider_keys');
  return {
    async put(key, actor, at) {
      const before = await collection.findOneAndUpdate(
        { _id: idOf(key.tenant, key.provider) },
        {
          $set: {
            tenant: key.tenant,
            provider: key.provider,
            sealed: key.sealed,
            fingerprint: key.fingerprint,
            rotated_at: at,
            rotated_by: actor,
          },
          $inc: { rotations: 1 },
        },
        { upsert: true, returnDocument: 'before' },
      );
      if (before === null) return {};
      await collection.updateOne(
        { _id: idOf(key.tenant, key.provider) },
        { $set: { previous_fingerprint: before.fingerprint } },
      );
      return { previous_fingerprint: before.fingerprint };
    },
    async get(tenant, provider) {
      const doc = await collection.findOne({ _id: idOf(tenant, provider) });
      if (doc === null) return undefined;
      const { tenant: t, provider: p, sealed, fingerprint, rotated_at, rotations } = doc;
      return { tenant: t, provider: p, sealed, fingerprint, rotated_at, rotations };
    },
    async list(tenant) {
      const docs = await collection.find({ tenant }, { sort: { provider: 1 }, projection: { sealed: 0 } });
      return docs.map(({ provider, fingerprint, rotated_at, rotations }) => ({
        provider,
        fingerprint,
        rotated_at,
        rotations,
      }));
    },
  };
}
