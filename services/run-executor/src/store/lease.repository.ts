import { isDuplicateKeyError } from '@ars/store';
import type { Store, StoreDocument } from '@ars/store';

/**
 * Run leases, next to the task rows they guard: collection `run_leases`, one
 * document per claimed run, `{ _id: task id, owner, expires_at }` (epoch ms).
 * Every executor of a deployment shares the task store, so a conditional
 * write on it is as good a compare-and-set as a KV revision, and it costs a
 * row in a transaction the executor commits anyway instead of two JetStream
 * messages stored, acknowledged and kept (bench/HISTORY.md, seventh pass).
 *
 * - claim: one upsert whose filter matches only a free lease (expired, or
 *   already the caller's); a held one makes the upsert collide with its
 *   `_id`, and the holder is read back.
 * - extend: one update of every lease the owner holds.
 * - release: the owner's document is deleted, so the collection holds only
 *   the runs being executed (and, for a while, those of an executor that
 *   died, until another executor takes them over).
 */

/** The run leases collection. */
export const RUN_LEASES_COLLECTION = 'run_leases';

interface LeaseDocument extends StoreDocument {
  owner: string;
  /** Epoch milliseconds after which another executor may take the run. */
  expires_at: number;
}

/** The outcome of {@link LeaseRepository.claim}. */
export type ClaimOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly holder: string; readonly expiresAt: number };

export interface LeaseRepository {
  /**
   * Takes the lease of `taskId` for `owner` until `expiresAt` when nobody
   * holds it, its holder let it expire (`expires_at <= now`), or `owner`
   * holds it already; otherwise reports the holder.
   */
  claim(taskId: string, owner: string, now: number, expiresAt: number): Promise<ClaimOutcome>;
  /** Moves the expiry of `owner`'s leases among `taskIds` to `expiresAt`; resolves to those it no longer holds. */
  extend(taskIds: readonly string[], owner: string, expiresAt: number): Promise<string[]>;
  /** Gives `owner`'s lease of `taskId` up (nothing when another executor took it meanwhile). */
  release(taskId: string, owner: string): Promise<void>;
}

/** The store-backed repository. */
export function createLeaseRepository(store: Store): LeaseRepository {
  const leases = store.collection<LeaseDocument>(RUN_LEASES_COLLECTION);

  return {
    async claim(taskId, owner, now, expiresAt) {
      try {
        await leases.updateOne(
          { _id: taskId, $or: [{ owner }, { expires_at: { $lte: now } }] },
          { $set: { owner, expires_at: expiresAt } },
          { upsert: true },
        );
        return { ok: true };
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
      // Held by someone else. Read back who; if it was released in between, it is free on the next offer.
      const current = await leases.findOne({ _id: taskId });
      return current === null
        ? { ok: false, holder: 'unknown', expiresAt: now }
        : { ok: false, holder: current.owner, expiresAt: current.expires_at };
    },

    async extend(taskIds, owner, expiresAt) {
      if (taskIds.length === 0) return [];
      const { matchedCount } = await leases.updateMany(
        { _id: { $in: taskIds }, owner },
        { $set: { expires_at: expiresAt } },
      );
      if (matchedCount === taskIds.length) return [];
      const mine = new Set((await leases.find({ _id: { $in: taskIds }, owner })).map((lease) => lease._id));
      return taskIds.filter((id) => !mine.has(id));
    },

    async release(taskId, owner) {
      await leases.deleteOne({ _id: taskId, owner });
    },
  };
}
