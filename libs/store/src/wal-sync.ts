import { closeSync, fdatasync, openSync } from 'node:fs';

/**
 * Syncs a database's write-ahead log to disk in the background, so that
 * its checkpoints do not wait for it on the event loop. Internal to this
 * package.
 *
 * With `synchronous = NORMAL` a commit only writes the log; the log is
 * synced when a checkpoint copies it into the database, inside the commit
 * that crosses `wal_autocheckpoint`. That sync then writes everything
 * committed since the previous checkpoint, up to about 40 MiB, and was most
 * of the checkpoint's time on the event loop (the copy and the database's
 * own sync are the rest): the longest stalls of a busy process, and its
 * slowest requests. Synced here on libuv's thread pool while commits come
 * ({@link WAL_SYNC_INTERVAL_MS} after the previous sync ended), the log is
 * mostly on disk when the checkpoint syncs it, which then waits for the
 * last interval's writes only.
 *
 * An extra sync of the log is always safe: it makes commits durable sooner
 * and changes nothing that is written. The log is opened read-only (a sync
 * needs no write access); SQLite keeps no lock on it, so closing this
 * descriptor releases none of SQLite's locks.
 *
 * The pool's four threads also serve DNS lookups, file reads and crypto: a
 * process syncs one log at a time (its {@link SyncLane}, shared by every
 * store it opens), and a store waits an interval after its sync ended, so
 * a slow disk slows the syncs, not the rest of the process.
 */

/** A store starts its next background sync this many milliseconds after its last one ended (or was tried). */
export const WAL_SYNC_INTERVAL_MS = 100;

/** The syncs a process runs at once: one, whichever store's. */
export class SyncLane {
  #busy = false;

  /** Takes the lane: false when a sync holds it. */
  take(): boolean {
    if (this.#busy) return false;
    this.#busy = true;
    return true;
  }

  release(): void {
    this.#busy = false;
  }
}

/** The lane of this process's stores. */
const PROCESS_LANE = new SyncLane();

/** Options of a {@link WalSync}; the defaults are for production, the rest for tests. */
export interface WalSyncOptions {
  /** @default {@link WAL_SYNC_INTERVAL_MS} */
  readonly intervalMs?: number;
  /** The clock, in ms. @default performance.now */
  readonly now?: () => number;
  /** Syncs a descriptor's data, calling back once done. @default fs.fdatasync */
  readonly sync?: (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void;
  /** @default the process's lane */
  readonly lane?: SyncLane;
}

export class WalSync {
  readonly #path: string;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #sync: NonNullable<WalSyncOptions['sync']>;
  readonly #lane: SyncLane;
  #fd: number | undefined;
  #syncing = false;
  #closed = false;
  #lastTried = Number.NEGATIVE_INFINITY;

  /** `path` is the log's file (the database's path and `-wal`), opened at the first sync. */
  constructor(path: string, options: WalSyncOptions = {}) {
    this.#path = path;
    this.#intervalMs = options.intervalMs ?? WAL_SYNC_INTERVAL_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#sync = options.sync ?? fdatasync;
    this.#lane = options.lane ?? PROCESS_LANE;
  }

  /**
   * After a commit: starts a sync of the log when the interval since this
   * store's last one passed and the process's lane is free; otherwise a
   * later commit starts it.
   */
  committed(): void {
    if (this.#syncing || this.#closed) return;
    const now = this.#now();
    if (now - this.#lastTried < this.#intervalMs) return;
    if (!this.#lane.take()) return;
    this.#lastTried = now;
    const fd = this.#open();
    if (fd === undefined) {
      this.#lane.release();
      return;
    }
    this.#syncing = true;
    this.#sync(fd, () => {
      // A failed sync is not reported: the checkpoint syncs the log itself, and fails its commit if it cannot.
      this.#syncing = false;
      this.#lane.release();
      this.#lastTried = this.#now();
      if (this.#closed) this.#release();
    });
  }

  /** Stops syncing; the descriptor closes now, or once the sync running ends. */
  close(): void {
    this.#closed = true;
    if (!this.#syncing) this.#release();
  }

  /** The log's descriptor, opened once; undefined while it cannot be (tried again an interval later). */
  #open(): number | undefined {
    if (this.#fd === undefined) {
      try {
        this.#fd = openSync(this.#path, 'r');
      } catch {
        return undefined;
      }
    }
    return this.#fd;
  }

  #release(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // A read-only descriptor does not fail to close but for a bug; never let that end the process.
    }
  }
}
