import type { LeaseRepository } from '../store/lease.repository.ts';

/**
 * Run leases: at most one executor holds a run at a time. A lease is taken
 * when a run is claimed, kept alive by its holder, and released when the
 * run is settled; one whose holder died expires after `ttlMs` of wall-clock
 * time, and only then may another executor take the run over. Holders
 * extend every lease they hold in one write on one shared timer (never a
 * timer nor a write per run). The leases live in the task store
 * ({@link LeaseRepository}), which every executor shares.
 *
 * A holder that cannot reach the store keeps running its runs, but not past
 * {@link STALE_FRACTION} of the lease's lifetime since it last set its
 * expiry: then it gives the lease up itself (`onLost`), before another
 * executor may take the run over, so that two never run it at once. And a
 * run asks {@link LeaseManager.holds} before each of its writes and events:
 * a holder whose process stood still past the expiry (a stop signal, a
 * suspended machine, a very long pause) learns on its own clock, before its
 * heartbeat hears it from the store, that the run may be someone else's.
 */

/** The part of `ttlMs` after which a lease its holder could not extend is given up. */
export const STALE_FRACTION = 2 / 3;

/**
 * The part of `ttlMs`, counted from when the holder last set the expiry,
 * within which it may still write and publish for the run. The rest is the
 * margin for the clocks of two executors' machines to differ; it is wider
 * than {@link STALE_FRACTION} so that a heartbeat a little late under load
 * (every third of `ttlMs`) does not give a run up.
 */
export const ACTIVE_FRACTION = 5 / 6;

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
  /**
   * Extends every held lease; a lease that another executor took is reported
   * through `onLost`, and so is one this holder has not been able to extend
   * for {@link STALE_FRACTION} of its lifetime (the write failing).
   */
  refreshAll(): Promise<void>;
  /**
   * True while this holder may act for the run: it holds `lease` and set
   * its expiry less than {@link ACTIVE_FRACTION} of `ttlMs` ago. Otherwise
   * the lease is given up on the spot (`onLost`) and false is returned.
   */
  holds(lease: Lease): boolean;
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
  /** When each held lease's expiry was last set to that time plus `ttlMs`. */
  const setAt = new Map<Lease, number>();

  const lose = (taskId: string): void => {
    const lease = held.get(taskId);
    if (lease === undefined) return;
    held.delete(taskId);
    setAt.delete(lease);
    options.onLost(taskId);
  };

  return {
    async acquire(taskId): Promise<AcquireResult> {
      const at = now();
      const outcome = await repository.claim(taskId, owner, at, at + ttlMs);
      if (!outcome.ok) return { ok: false, holder: outcome.holder, retryInMs: Math.max(0, outcome.expiresAt - at) };
      const lease: Lease = { taskId };
      held.set(taskId, lease);
      setAt.set(lease, at);
      return { ok: true, lease };
    },

    async refreshAll(): Promise<void> {
      if (held.size === 0) return;
      const extended = new Map(held);
      const at = now();
      let gone: string[];
      try {
        gone = await repository.extend([...extended.keys()], owner, at + ttlMs);
      } catch (error) {
        // The next round retries; a lease about to expire in the store is given up before someone else takes it.
        const staleBefore = now() - ttlMs * STALE_FRACTION;
        for (const [taskId, lease] of extended) {
          if (held.get(taskId) === lease && (setAt.get(lease) ?? 0) <= staleBefore) lose(taskId);
        }
        throw error;
      }
      const lost = new Set(gone);
      for (const [taskId, lease] of extended) {
        // Released (or released and taken again) while the write was under way: neither extended nor lost.
        if (held.get(taskId) !== lease) continue;
        if (lost.has(taskId)) lose(taskId);
        else setAt.set(lease, at);
      }
    },

    holds(lease): boolean {
      if (held.get(lease.taskId) !== lease) return false;
      if (now() - (setAt.get(lease) ?? 0) < ttlMs * ACTIVE_FRACTION) return true;
      lose(lease.taskId);
      return false;
    },

    async release(lease): Promise<void> {
      if (held.get(lease.taskId) === lease) held.delete(lease.taskId);
      setAt.delete(lease);
      // Unreleased, the lease expires after its TTL: the run's next claim waits that long at most.
      await repository.release(lease.taskId, owner).catch(() => undefined);
    },
  };
}
