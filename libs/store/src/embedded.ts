import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbeddedCollection } from './embedded-collection.ts';
import { StoreError } from './errors.ts';
import { Datastore } from './nedb.ts';
import type { NedbDatastore } from './nedb.ts';
import { SerialQueue } from './serial-queue.ts';
import type { Collection, Store, StoreDocument } from './types.ts';
import { assertCollectionName, assertDatabaseName } from './validate.ts';

/** How often datafiles are compacted by default: 10 minutes, in milliseconds. */
export const DEFAULT_COMPACTION_INTERVAL_MS = 600_000;

/** Options of {@link openEmbeddedStore}. */
export interface EmbeddedStoreOptions {
  /** Root directory; datafiles go to `<dataDir>/<database>/<collection>.db`. */
  dataDir: string;
  /** The database (one directory per service). */
  database: string;
  /** Keep everything in memory, write no file (tests, throwaway runs). @default false */
  inMemory?: boolean;
  /**
   * Period of the background compaction that rewrites each append-only
   * datafile to one line per live document; `0` turns it off (close still
   * compacts). @default DEFAULT_COMPACTION_INTERVAL_MS
   */
  compactionIntervalMs?: number;
  /** Receives failures of background compaction; the next period retries. @default ignore */
  onBackgroundError?: (error: StoreError) => void;
}

/** The longest delay `setInterval` honours (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface OpenCollection {
  collection: EmbeddedCollection<StoreDocument>;
  datastore: NedbDatastore;
  ready: Promise<void>;
  queue: SerialQueue;
}

/**
 * The embedded adapter on `@seald-io/nedb`: one datastore per collection,
 * loaded on first use. One process per data directory: nedb keeps the data
 * in memory and appends to the file, so a second process would not see the
 * first one's writes and compaction would overwrite them.
 */
class EmbeddedStore implements Store {
  readonly kind = 'embedded' as const;
  readonly database: string;
  readonly #directory: string | null;
  readonly #onBackgroundError: (error: StoreError) => void;
  readonly #collections = new Map<string, OpenCollection>();
  #timer: NodeJS.Timeout | undefined;
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
    const datastore = new Datastore({
      ...(this.#directory === null ? { inMemoryOnly: true } : { filename: join(this.#directory, `${name}.db`) }),
      autoload: true,
      // With an onload callback nedb reports a failed load there instead of
      // rethrowing it unhandled; the failure reaches callers through `ready`.
      onload: () => undefined,
    });
    const ready = datastore.autoloadPromise ?? Promise.resolve();
    const queue = new SerialQueue();
    const collection = new EmbeddedCollection<StoreDocument>({
      name,
      datastore,
      ready,
      queue,
      assertOpen: this.#assertOpen,
    });
    return { collection, datastore, ready, queue };
  }

  async #compactInBackground(): Promise<void> {
    // A slow disk must not stack up rounds.
    if (this.#compacting) return;
    this.#compacting = true;
    try {
      for (const [name, open] of this.#collections) {
        try {
          await open.ready;
          await open.datastore.compactDatafileAsync();
        } catch (error) {
          const failure = new StoreError(`embedded compaction of ${name} failed`, { cause: error, retryable: true });
          this.#onBackgroundError(failure);
        }
      }
    } finally {
      this.#compacting = false;
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#finish();
    return this.#closing;
  }

  async #finish(): Promise<void> {
    clearInterval(this.#timer);
    const results = await Promise.allSettled(
      [...this.#collections.entries()].map(async ([name, open]) => {
        await open.queue.idle();
        const loaded = await open.ready.then(
          () => true,
          () => false,
        );
        if (!loaded || this.#directory === null) return;
        try {
          await open.datastore.compactDatafileAsync();
        } catch (error) {
          throw new StoreError(`embedded compaction of ${name} on close failed`, { cause: error });
        }
      }),
    );
    const failure = results.find((result) => result.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  }
}

/**
 * Opens the embedded store. Creates `<dataDir>/<database>` unless `inMemory`.
 * @throws StoreError when the name is invalid or the directory cannot be made
 */
export async function openEmbeddedStore(options: EmbeddedStoreOptions): Promise<Store> {
  assertDatabaseName(options.database);
  const interval = options.compactionIntervalMs;
  if (interval !== undefined && (!Number.isFinite(interval) || interval < 0)) {
    throw new StoreError('compactionIntervalMs must be a non-negative number');
  }
  if (options.inMemory === true) return new EmbeddedStore(options, null);
  const directory = join(options.dataDir, options.database);
  try {
    await mkdir(directory, { recursive: true });
  } catch (error) {
    throw new StoreError(`cannot create the data directory ${directory}`, { cause: error });
  }
  return new EmbeddedStore(options, directory);
}
