import type { LeaseRepository } from '../store/lease.repository.ts';

/**
 * Run leases: at most one executor holds a run at a time. A lease is taken
 * when a run is claimed, kept alive by its holder, and released when the
 * run is settled; one whose holder died expires after `ttlMs` of wall-clock
 * time, and only then may another executor take the run over. Holders
 * extend every lease they hold in one write on one shared timer (never a
 * timer nor a write per run). The leases live in the task store
 * ({@link LeaseRepository}), which every executor shares.
 */

/** A held lease. */
export interface Lease {
  readonly taskId: string;
}

/** The outcome of {@link LeaseManager.acquire}. */
export type AcquireResult =
  | { readonly ok: true; readonly lease: Lease }
  | { readonly ok: false; readonly holder: string; readonly retryInMs: number };

export interface LeaseManager {
  acquire(taskId: string): Promise<AcquireResult>;
  /** Extends every held lease; a lease that another executor took is reported through `onLost`. */
  refreshAll(): Promise<void>;
  /** Gives the lease up (best effort: an expired lease is someone else's to take anyway). */
  release(lease: Lease): Promise<void>;
}

/** Options of {@link createLeaseManager}. */
export interface LeaseOptions {
  readonly owner: string;
  readonly ttlMs: number;
  readonly onLost: (taskId: string) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

/** This executor's lease manager on `repository`. */
export function createLeaseManager(repository: LeaseRepository, options: LeaseOptions): LeaseManager {
  const { owner, ttlMs } = options;
  const now = options.now ?? Date.now;
  const held = new Map<string, Lease>();

  return {
    async acquire(taskId): Promise<AcquireResult> {
      const at = now();
      const outcome = await repository.claim(taskId, owner, at, at + ttlMs);
      if (!outcome.ok) return { ok: false, holder: outcome.holder, retryInMs: Math.max(0, outcome.expiresAt - at) };
      const lease: Lease = { taskId };
      held.set(taskId, lease);
      return { ok: true, lease };
    },

    async refreshAll(): Promise<void> {
      if (held.size === 0) return;
      const extended = new Map(held);
      // A failed write keeps every lease (the next round retries): only a lease seen in another's hands is lost.
      const gone = await repository.extend([...extended.keys()], owner, now() + ttlMs);
      for (const taskId of gone) {
        const lease = extended.get(taskId);
        // Released (or released and taken again) while the write was under way: not lost.
        if (lease === undefined || held.get(taskId) !== lease) continue;
        held.delete(taskId);
        options.onLost(taskId);
      }
    },

    async release(lease): Promise<void> {
      if (held.get(lease.taskId) === lease) held.delete(lease.taskId);
      await repository.release(lease.taskId, owner).catch(() => undefined);
    },
  };
}
