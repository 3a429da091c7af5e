import { isDuplicateKeyError } from '@ars/store';
import type { Store, StoreDocument } from '@ars/store';
import type { BucketState } from '../domain/token-bucket.ts';

/** One rate-limit bucket; `_id` = JSON `[tenant, tier, model]`. */
interface BucketDocument extends StoreDocument {
  tenant: string;
  tier: string;
  model: string;
  level: number;
  refilled_at_ms: number;
  /** Optimistic-concurrency counter: every write must name the version it read. */
  version: number;
  updated_at: string;
}

/** Which bucket. */
export interface BucketKey {
  readonly tenant: string;
  readonly tier: string;
  readonly model: string;
}

/** A bucket as read, with the version a write must present. */
export interface StoredBucket extends BucketKey {
  readonly state: BucketState;
  readonly version: number;
  readonly updated_at: string;
}

/** Rate-limit buckets per (tenant, tier, model), shared by every replica through the store. */
export interface BucketRepository {
  get(key: BucketKey): Promise<StoredBucket | undefined>;
  /**
   * Writes the bucket if it is still at `version` (undefined: it must not
   * exist yet). False when another writer got there first: read and decide again.
   */
  save(key: BucketKey, version: number | undefined, state: BucketState, at: string): Promise<boolean>;
  list(tenant: string): Promise<StoredBucket[]>;
}

const idOf = (key: BucketKey) => JSON.stringify([key.tenant, key.tier, key.model]);

function toStored(doc: BucketDocument): StoredBucket {
  return {
    tenant: doc.tenant,
    tier: doc.tier,
    model: doc.model,
    state: { level: doc.level, refilled_at_ms: doc.refilled_at_ms },
    version: doc.version,
    updated_at: doc.updated_at,
  };
}

/** The store-backed bucket repository (collection `rate_buckets`). */
export function createBucketRepository(store: Store): BucketRepository {
  const collection = store.collection<BucketDocument>('rate_buckets');
  return {
    async get(key) {
      const doc = await collection.findOne({ _id: idOf(key) });
      return doc === null ? undefined : toStored(doc);
    },
    async save(key, version, state, at) {
      const fields = { level: state.level, refilled_at_ms: state.refilled_at_ms, updated_at: at };
      if (version === undefined) {
        try {
          await collection.insertOne({ _id: idOf(key), ...key, ...fields, version: 1 });
          return true;
        } catch (error) {
          if (isDuplicateKeyError(error)) return false;
          throw error;
        }
      }
      const result = await collection.updateOne({ _id: idOf(key), version }, { $set: fields, $inc: { version: 1 } });
      return result.matchedCount === 1;
    },
    async list(tenant) {
      const docs = await collection.find({ tenant }, { sort: { tier: 1, model: 1 } });
      return docs.map(toStored);
    },
  };
}
