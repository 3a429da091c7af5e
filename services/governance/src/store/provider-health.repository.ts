import type { Store, StoreDocument } from '@ars/store';

/** Failures of one provider for one tenant, as reported by failovers; `_id` = JSON `[tenant, provider]`. */
interface ProviderHealthDocument extends StoreDocument {
  tenant: string;
  provider: string;
  failures: number;
  last_failure_at: string;
  last_reason: string;
}

/** A provider's failure record. */
export interface ProviderFailures {
  readonly provider: string;
  readonly failures: number;
  readonly last_failure_at: string;
  readonly last_reason: string;
}

/** Provider failures per tenant (what llm.posture's `healthy` is derived from). */
export interface ProviderHealthRepository {
  recordFailure(tenant: string, provider: string, reason: string, at: string): Promise<void>;
  list(tenant: string): Promise<ProviderFailures[]>;
}

/** The store-backed provider health repository (collection `provider_health`). */
export function createProviderHealthRepository(store: Store): ProviderHealthRepository {
  const collection = store.collection<ProviderHealthDocument>('provider_health');
  return {
    async recordFailure(tenant, provider, reason, at) {
      await collection.updateOne(
        { _id: JSON.stringify([tenant, provider]) },
        {
          $setOnInsert: { tenant, provider },
          $inc: { failures: 1 },
          $set: { last_failure_at: at, last_reason: reason },
        },
        { upsert: true },
      );
    },
    async list(tenant) {
      const docs = await collection.find({ tenant }, { sort: { provider: 1 } });
      return docs.map(({ provider, failures, last_failure_at, last_reason }) => ({
        provider,
        failures,
        last_failure_at,
        last_reason,
      }));
    },
  };
}
