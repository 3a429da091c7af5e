import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AppendLog, repairTornTail } from './append-log.ts';
import { EmbeddedCollection } from './embedded-collection.ts';
import { StoreError } from './errors.ts';
import { Datastore, serializeDocument } from './nedb.ts';
import type { NedbDatastore, NedbInternals } from './nedb.ts';
import { SerialQueue } from './serial-queue.ts';
import { openSqliteStore } from './sqlite-store.ts';
import type { Collection, Store, StoreDocument } from './types.ts';
import { assertCollectionName, assertDatabaseName } from './validate.ts';

/** How often datafiles are compacted by default: 10 minutes, in milliseconds. */
export const DEFAULT_COMPACTION_INTERVAL_MS = 600_000;

/** How often appended lines are flushed to the device by default: every second, in milliseconds. */
export const DEFAULT_SYNC_INTERVAL_MS = 1_000;

/** The engines of the embedded adapter. */
export const EMBEDDED_ENGINES = ['nedb', 'sqlite'] as const;

/**
 * `nedb`: every document in the process heap, appended to
 * `<collection>.db` files, one process per data directory. `sqlite`:
 * documents on disk in `store.sqlite` (Node's `node:sqlite`), memory bounded
 * by its page cache, any number of processes per data directory. Both have
 * the same semantics (nedb's model evaluates filters and updates in both).
 */
export type EmbeddedEngine = (typeof EMBEDDED_ENGINES)[number];

/** Options of {@link openEmbeddedStore}. */
export interface EmbeddedStoreOptions {
  /**
   * Root directory: `<dataDir>/<database>/<collection>.db` (nedb) or
   * `<dataDir>/<database>/store.sqlite` (sqlite).
   */
  dataDir: string;
  /** The database (one directory per service). */
  database: string;
  /**
   * The storage engine. The sqlite engine imports the nedb datafiles it
   * finds in the directory (renaming them `<collection>.db.migrated`).
   * @default 'sqlite'
   */
  engine?: EmbeddedEngine;
  /** Keep everything in memory, write no file (tests, throwaway runs). @default false */
  inMemory?: boolean;
  /**
   * nedb only (sqlite needs no compaction). Period of the background
   * compaction that rewrites each append-only datafile to one line per live
   * document; `0` turns it off (close still compacts).
   * @default DEFAULT_COMPACTION_INTERVAL_MS
   */
  compactionIntervalMs?: number;
  /**
   * nedb only. Period of the `fdatasync` of every datafile appended to
   * since the last one; `0` leaves flushing to the operating system (nedb's
   * own policy). Every write reaches the operating system before it
   * resolves, so a process crash loses nothing acknowledged; a machine crash
   * loses at most this period. Compaction and close always flush. The
   * sqlite engine commits in WAL mode with `synchronous=NORMAL`: a process
   * crash loses nothing acknowledged either; a machine crash may lose the
   * commits since the last checkpoint, never the database's consistency.
   * @default DEFAULT_SYNC_INTERVAL_MS
   */
  syncIntervalMs?: number;
  /**
   * Receives failures of background work (compaction, flushing; the next
   * period retries) and the repair of a torn last line at load; for the
   * sqlite engine, what the import of nedb datafiles reports. @default ignore
   */
  onBackgroundError?: (error: StoreError) => void;
  /**
   * sqlite only. Runs after each commit of a turn's writes, in the same
   * turn, once what awaited them went on (`ConnectionOptions.afterCommit`):
   * a service flushes its bus connection there, so that what it sends after
   * a write leaves at once instead of a turn later. @default nothing
   */
  afterCommit?: () => void;
  /**
   * sqlite only. This process is the only one that opens the directory's
   * database (`ConnectionOptions.exclusive`): its transactions make no
   * locking system calls, and another process opening it is refused.
   * @default false (several processes may share it)
   */
  exclusive?: boolean;
}

/** The longest delay `setInterval` honours (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface OpenCollection {
  collection: EmbeddedCollection<StoreDocument>;
  datastore: NedbDatastore & NedbInternals;
  ready: Promise<void>;
  queue: SerialQueue;
  /** The datafile's writer; `null` in memory. */
  log: AppendLog | null;
}

/**
 * The embedded adapter on `@seald-io/nedb`: one datastore per collection,
 * loaded on first use. One process per data directory: nedb keeps the data
 * in memory and appends to the file, so a second process would not see the
 * first one's writes and compaction would overwrite them.
 */
class EmbeddedStore implements Store {
  readonly kind = 'embedded' as const;
  readonly compoundIndexes = false;
  readonly database: string;
  readonly #directory: string | null;
  readonly #onBackgroundError: (error: StoreError) => void;
  readonly #collections = new Map<string, OpenCollection>();
  #timer: NodeJS.Timeout | undefined;
  #syncTimer: NodeJS.Timeout | undefined;
  #compacting = false;
  #closing: Promise<void> | undefined;

  constructor(options: EmbeddedStoreOptions, directory: string | null) {
    this.database = options.database;
    this.#directory = directory;
    this.#onBackgroundError = options.onBackgroundError ?? (() => undefined);
    const interval = options.compactionIntervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS;
    if (directory !== null && interval > 0) {
      // unref: a forgotten close must not keep the process alive.
      this.#timer = setInterval(() => void this.#compactInBackground(), Math.min(interval, MAX_TIMER_MS)).unref();
    }
    const syncInterval = options.syncIntervalMs ?? DEFAULT_SYNC_INTERVAL_MS;
    if (directory !== null && syncInterval > 0) {
      this.#syncTimer = setInterval(() => this.#syncInBackground(), Math.min(syncInterval, MAX_TIMER_MS)).unref();
    }
  }

  readonly #assertOpen = (): void => {
    if (this.#closing !== undefined) throw new StoreError(`store ${this.database} is closed`);
  };

  collection<T extends StoreDocument>(name: string): Collection<T> {
    this.#assertOpen();
    assertCollectionName(name);
    let open = this.#collections.get(name);
    if (open === undefined) {
      open = this.#openCollection(name);
      this.#collections.set(name, open);
    }
    return open.collection as unknown as Collection<T>;
  }

  #openCollection(name: string): OpenCollection {
    const queue = new SerialQueue();
    if (this.#directory === null) {
      const datastore = new Datastore({ inMemoryOnly: true, autoload: true, onload: () => undefined });
      const ready = datastore.autoloadPromise ?? Promise.resolve();
      return this.#assemble(name, datastore, ready, queue, null, () => undefined);
    }
    const filename = join(this.#directory, `${name}.db`);
    const datastore = new Datastore({ filename });
    const log = new AppendLog(filename);
    const append = replacePersistence(datastore, log);
    const ready = repairTornTail(filename).then(async (dropped) => {
      if (dropped > 0) {
        this.#onBackgroundError(
          new StoreError(`embedded ${name}: dropped a torn last line (${dropped} bytes) left by a crash`),
        );
      }
      await datastore.loadDatabaseAsync();
    });
    // Callers see a failed load through `ready`; it must not also be an unhandled rejection.
    ready.catch(() => undefined);
    return this.#assemble(name, datastore, ready, queue, log, append);
  }

  #assemble(
    name: string,
    datastore: NedbDatastore & NedbInternals,
    ready: Promise<void>,
    queue: SerialQueue,
    log: AppendLog | null,
    append: (lines: readonly object[]) => void,
  ): OpenCollection {
    const collection = new EmbeddedCollection<StoreDocument>({
      name,
      datastore,
      ready,
      queue,
      append,
      assertOpen: this.#assertOpen,
    });
    return { collection, datastore, ready, queue, log };
  }

  #syncInBackground(): void {
    for (const [name, open] of this.#collections) {
      if (open.log?.dirty !== true) continue;
      open.log.sync().catch((error: unknown) => {
        this.#onBackgroundError(new StoreError(`embedded flush of ${name} failed`, { cause: error, retryable: true }));
      });
    }
  }

  async #compactInBackground(): Promise<void> {
    // A slow disk must not stack up rounds.
    if (this.#compacting) return;
    this.#compacting = true;
    try {
      for (const [name, open] of this.#collections) {
        try {
          await open.ready;
          // Through the queue: writes append synchronously and must not land between the snapshot and the rename.
          await open.queue.run(() => open.datastore.compactDatafileAsync());
        } catch (error) {
          const failure = new StoreError(`embedded compaction of ${name} failed`, { cause: error, retryable: true });
          this.#onBackgroundError(failure);
        }
      }
    } finally {
      this.#compacting = false;
    }
  }

  /** nedb applies each write on its own: nothing waits for a batch. */
  commitSoon(): void {}

  close(): Promise<void> {
    this.#closing ??= this.#finish();
    return this.#closing;
  }

  async #finish(): Promise<void> {
    clearInterval(this.#timer);
    clearInterval(this.#syncTimer);
    const results = await Promise.allSettled(
      [...this.#collections.entries()].map(async ([name, open]) => {
        await open.queue.idle();
        const loaded = await open.ready.then(
          () => true,
          () => false,
        );
        if (!loaded || open.log === null) return;
        try {
          await open.queue.run(() => open.datastore.compactDatafileAsync());
        } catch (error) {
          throw new StoreError(`embedded compaction of ${name} on close failed`, { cause: error });
        } finally {
          await open.log.detach();
        }
      }),
    );
    const failure = results.find((result) => result.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  }
}

/**
 * Routes nedb's appends through `log` (one open file, one write per change)
 * instead of nedb's open/append/close per change, and returns the
 * synchronous append the collection's writes use. Compaction (and the load,
 * which compacts) replaces the file by a rename: the log lets go of the old
 * one first and opens the new one at its next append. Both run inside the
 * collection's queue (the load before any write), so no append interleaves
 * with them.
 */
function replacePersistence(datastore: NedbDatastore, log: AppendLog): (documents: readonly object[]) => void {
  const persistence = datastore.persistence;
  const rewrite = persistence.persistCachedDatabaseAsync.bind(persistence);
  const append = (documents: readonly object[]): void => {
    let lines = '';
    for (const document of documents) lines += serializeDocument(document) + '\n';
    log.append(lines);
  };
  // nedb's own index changes still append through here.
  persistence.persistNewStateAsync = async (documents) => append(documents);
  persistence.persistCachedDatabaseAsync = async () => {
    await log.detach();
    await rewrite();
  };
  return append;
}

/**
 * Opens the embedded store on the chosen engine. Creates
 * `<dataDir>/<database>` unless `inMemory`.
 * @throws StoreError when the name, engine or a period is invalid, the
 *   directory cannot be made, or (sqlite) the database cannot be opened or a
 *   nedb datafile not imported
 */
export async function openEmbeddedStore(options: EmbeddedStoreOptions): Promise<Store> {
  assertDatabaseName(options.database);
  const engine = options.engine ?? 'sqlite';
  if (!EMBEDDED_ENGINES.includes(engine)) throw new StoreError(`engine must be one of ${EMBEDDED_ENGINES.join(', ')}`);
  const interval = options.compactionIntervalMs;
  if (interval !== undefined && (!Number.isFinite(interval) || interval < 0)) {
    throw new StoreError('compactionIntervalMs must be a non-negative number');
  }
  const sync = options.syncIntervalMs;
  if (sync !== undefined && (!Number.isFinite(sync) || sync < 0)) {
    throw new StoreError('syncIntervalMs must be a non-negative number');
  }
  let directory: string | null = null;
  if (options.inMemory !== true) {
    directory = join(options.dataDir, options.database);
    try {
      await mkdir(directory, { recursive: true });
    } catch (error) {
      throw new StoreError(`cannot create the data directory ${directory}`, { cause: error });
    }
  }
  if (engine === 'sqlite') {
    const onBackgroundError = options.onBackgroundError ?? (() => undefined);
    return openSqliteStore({
      database: options.database,
      directory,
      onBackgroundError,
      afterCommit: options.afterCommit,
      exclusive: options.exclusive,
    });
  }
  return new EmbeddedStore(options, directory);
}
