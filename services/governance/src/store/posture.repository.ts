import type { GovernanceTier, IdentityQuad } from '@ars/contracts';
import type { Store, StoreDocument } from '@ars/store';
import { BUILTIN_POSTURE } from '../domain/posture.ts';
import type { Posture } from '../domain/posture.ts';

/** The one posture document. */
interface PostureDocument extends StoreDocument {
  _id: typeof POSTURE_ID;
  default_tier: string;
  tiers: GovernanceTier[];
  updated_at: string;
  updated_by: IdentityQuad;
}

const POSTURE_ID = 'posture';
/** The collection of the posture document (its writes are announced: executors keep which tiers are open). */
export const POSTURE_COLLECTION = 'posture';

/** The runtime-wide posture (tiers and default tier). */
export interface PostureRepository {
  /** The current posture; the built-in one until a posture is set. */
  get(): Promise<Posture>;
  /** Replaces the posture atomically and returns it before and after. */
  replace(
    next: { readonly default_tier: string; readonly tiers: readonly GovernanceTier[] },
    actor: IdentityQuad,
    at: string,
  ): Promise<{ readonly before: Posture; readonly after: Posture }>;
}

function toPosture(doc: PostureDocument | null): Posture {
  if (doc === null) return BUILTIN_POSTURE;
  return { default_tier: doc.default_tier, tiers: doc.tiers, updated_at: doc.updated_at };
}

/** The store-backed posture repository (collection `posture`). */
export function createPostureRepository(store: Store): PostureRepository {
  const collection = store.collection<PostureDocument>(POSTURE_COLLECTION, { cacheReads: true });
  return {
    async get() {
      return toPosture(await collection.findOne({ _id: POSTURE_ID }));
    },
    async replace(next, actor, at) {
      const before = await collection.findOneAndUpdate(
        { _id: POSTURE_ID },
        { $set: { default_tier: next.default_tier, tiers: [...next.tiers], updated_at: at, updated_by: actor } },
        { upsert: true, returnDocument: 'before' },
      );
      return {
        before: toPosture(before),
        after: { default_tier: next.default_tier, tiers: next.tiers, updated_at: at },
      };
    },
  };
}
