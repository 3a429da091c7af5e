import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StoreError, isStoreError } from './errors.ts';
import { SqliteCollection } from './sqlite-collection.ts';
import { BUSY_TIMEOUT_MS, Connection, isBusy } from './sqlite-connection.ts';
import { migrateDatafiles } from './sqlite-migration.ts';
import type { Collection, CollectionOptions, Store, StoreDocument } from './types.ts';
import { assertCollectionName } from './validate.ts';

/** The database file of a store, in its directory. */
export const SQLITE_FILENAME = 'store.sqlite';

/** Options of {@link openSqliteStore}, checked by `openEmbeddedStore`. */
export interface SqliteStoreOptions {
  database: string;
  /** The store's directory (it exists), or null for a database in memory. */
  directory: string | null;
  /** Receives what the import of nedb datafiles reports. */
  onBackgroundError: (error: StoreError) => void;
  /** See `ConnectionOptions.afterCommit`. */
  afterCommit?: (() => void) | undefined;
  /** See `ConnectionOptions.exclusive`. */
  exclusive?: boolean | undefined;
}

/**
 * The embedded adapter's `sqlite` engine: one SQLite database per store
 * (`<dataDir>/<database>/store.sqlite`), documents on disk, memory bounded
 * by SQLite's page cache. Several processes may open the same directory:
 * SQLite's locks serialise their writes, and each connection notices what
 * the others committed (indexes included) at its next operation.
 */
class SqliteStore implements Store {
  readonly kind = 'embedded' as const;
  readonly compoundIndexes = true;
  readonly database: string;
  readonly #connection: Connection;
  readonly #collections = new Map<string, SqliteCollection<StoreDocument>>();
  #closing: Promise<void> | undefined;

  constructor(database: string, connection: Connection) {
    this.database = database;
    this.#connection = connection;
  }

  readonly #assertOpen = (): void => {
    if (this.#closing !== undefined) throw new StoreError(`store ${this.database} is closed`);
  };

  collection<T extends StoreDocument>(name: string, options: CollectionOptions = {}): Collection<T> {
    this.#assertOpen();
    assertCollectionName(name);
    let collection = this.#collections.get(name);
    if (collection === undefined) {
      collection = new SqliteCollection({ name, connection: this.#connection, assertOpen: this.#assertOpen });
      this.#collections.set(name, collection);
    }
    if (options.cacheReads === true) collection.cacheReads();
    return collection as unknown as Collection<T>;
  }

  commitSoon(): void {
    if (this.#closing === undefined) this.#connection.commitSoon();
  }

  close(): Promise<void> {
    this.#closing ??= this.#finish();
    return this.#closing;
  }

  /** Lets the operations waiting for another process's lock finish (or time out), then closes. */
  async #finish(): Promise<void> {
    await this.#connection.idle();
    try {
      this.#connection.close();
    } catch (error) {
      throw new StoreError(`embedded store ${this.database} failed to close`, { cause: error });
    }
  }
}

/**
 * Opens the connection, retrying while another process holds the database in
 * a way SQLite answers "database is locked" without waiting (replicas of a
 * service starting at once on one new directory: one of two run-executors
 * failed to start in about one start of eight), for up to twice the busy
 * timeout, on the event loop. `open` is for tests. Internal to this package.
 */
export async function connect(
  location: string,
  open: (location: string) => Connection = (at) => new Connection(at),
): Promise<Connection> {
  const deadline = Date.now() + 2 * BUSY_TIMEOUT_MS;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return open(location);
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
      await sleep(Math.min(5 * 2 ** attempt, 100));
    }
  }
}

/**
 * Opens the sqlite engine's store, importing the nedb datafiles left in its
 * directory first (see `sqlite-migration.ts`).
 * @throws StoreError when the database cannot be opened or a datafile not imported
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  const { directory } = options;
  const location = directory === null ? ':memory:' : join(directory, SQLITE_FILENAME);
  let connection: Connection;
  try {
    connection = await connect(
      location,
      (at) => new Connection(at, { afterCommit: options.afterCommit, exclusive: options.exclusive }),
    );
  } catch (error) {
    // Locked past the retries: most likely a process that holds it alone (`ars up` opens its stores so).
    const held = isBusy(error) ? ': another process holds it' : '';
    throw new StoreError(`cannot open the embedded database ${location}${held}`, {
      cause: error,
      retryable: held !== '',
    });
  }
  if (directory !== null) {
    try {
      await migrateDatafiles(connection, directory, options.onBackgroundError);
    } catch (error) {
      connection.close();
      throw isStoreError(error)
        ? error
        : new StoreError(`cannot read the data directory ${directory}`, { cause: error });
    }
  }
  return new SqliteStore(options.database, connection);
}
