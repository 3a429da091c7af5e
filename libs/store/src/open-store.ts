import { openEmbeddedStore } from './embedded.ts';
import type { EmbeddedEngine } from './embedded.ts';
import type { StoreError } from './errors.ts';
import type { Store } from './types.ts';

/** Options of {@link openStore}; service-kit fills them from the service's config. */
export interface OpenStoreOptions {
  /**
   * MongoDB connection string. When set (and not empty) the `mongodb`
   * adapter is used and `dataDir`, `inMemory` and the compaction options are
   * ignored; otherwise the `embedded` one.
   */
  mongoUrl?: string | undefined;
  /** Root of the embedded data: `<dataDir>/<database>/<collection>.db` (nedb) or `.../store.sqlite` (sqlite). */
  dataDir: string;
  /** The service's database: letters, digits, `_` and `-`, at most 63 characters. */
  database: string;
  /**
   * Embedded only: `nedb` (documents in memory, one process per data
   * directory) or `sqlite` (documents on disk, several processes may share
   * it; imports nedb datafiles it finds). @default 'sqlite'
   */
  engine?: EmbeddedEngine;
  /** Embedded only: keep the data in memory, write no file. @default false */
  inMemory?: boolean;
  /** Embedded nedb only: background compaction period in ms, `0` for none. @default 600000 (10 minutes) */
  compactionIntervalMs?: number;
  /**
   * Embedded nedb only: `fdatasync` period of appended datafiles in ms, `0` to
   * leave flushing to the operating system (sqlite: WAL, `synchronous=NORMAL`). @default 1000
   */
  syncIntervalMs?: number;
  /**
   * Embedded only: receives background compaction and flush failures, torn-line
   * repairs and (sqlite) nedb import reports (log them). @default ignore
   */
  onBackgroundError?: (error: StoreError) => void;
  /** Embedded sqlite only: see `EmbeddedStoreOptions.afterCommit`. */
  afterCommit?: () => void;
  /** Embedded sqlite only: see `EmbeddedStoreOptions.exclusive`. */
  exclusive?: boolean;
}

/**
 * Opens the service's store, picking the adapter: `mongodb` when `mongoUrl`
 * is given, else `embedded`. The result's `kind` says which.
 * @throws StoreError when the database name is invalid, the data directory
 *   cannot be created, or MongoDB cannot be reached (then `retryable`)
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  if (options.mongoUrl !== undefined && options.mongoUrl !== '') {
    // Imported only here: the driver is about a megabyte of modules that a process on the embedded store never runs.
    const { openMongoStore } = await import('./mongodb.ts');
    return openMongoStore({ mongoUrl: options.mongoUrl, database: options.database });
  }
  return openEmbeddedStore(options);
}
