import nedbModule from '@seald-io/nedb';

/**
 * A minimal typed view of `@seald-io/nedb` 4.x, limited to what the embedded
 * adapter uses. The package's own `index.d.ts` declares `export default` on a
 * CommonJS module (`module.exports = Datastore`), which TypeScript's NodeNext
 * resolution reads as a namespace that cannot be constructed; at run time the
 * default import is the constructor. Internal to this package.
 */

/** A nedb query or update object (already translated to nedb's dialect). */
export type NedbQuery = Record<string, unknown>;

/** A stored document as nedb returns it (a deep copy). */
export type NedbDocument = Record<string, unknown> & { _id: string };

/** A lazy nedb cursor: chain, then await. */
export interface NedbCursor<R> extends PromiseLike<R> {
  sort(sort: Record<string, number>): NedbCursor<R>;
  skip(count: number): NedbCursor<R>;
  limit(count: number): NedbCursor<R>;
  projection(projection: Record<string, number>): NedbCursor<R>;
}

/** Result of `updateAsync`; `affectedDocuments` needs `returnUpdatedDocs`. */
export interface NedbUpdateResult {
  numAffected: number;
  affectedDocuments: NedbDocument | NedbDocument[] | null;
  upsert: boolean;
}

/** The datastore options the adapter sets. */
export interface NedbOptions {
  filename?: string;
  inMemoryOnly?: boolean;
  autoload?: boolean;
  onload?: (error: Error | null) => void;
}

/** One nedb datastore: a collection backed by one append-only file. */
export interface NedbDatastore {
  /** Set when `autoload` is on; rejects when the datafile cannot be loaded. */
  readonly autoloadPromise: Promise<void> | null;
  findAsync(query: NedbQuery, projection?: Record<string, number>): NedbCursor<NedbDocument[]>;
  countAsync(query: NedbQuery): NedbCursor<number>;
  insertAsync(document: NedbQuery): Promise<NedbDocument>;
  insertAsync(documents: NedbQuery[]): Promise<NedbDocument[]>;
  updateAsync(
    query: NedbQuery,
    update: NedbQuery,
    options: { multi?: boolean; upsert?: boolean; returnUpdatedDocs?: boolean },
  ): Promise<NedbUpdateResult>;
  removeAsync(query: NedbQuery, options: { multi?: boolean }): Promise<number>;
  ensureIndexAsync(options: { fieldName: string | string[]; unique?: boolean; sparse?: boolean }): Promise<void>;
  compactDatafileAsync(): Promise<void>;
}

/** Constructor of {@link NedbDatastore}. */
export type NedbDatastoreConstructor = new (options: NedbOptions) => NedbDatastore;

/** The nedb `Datastore` class. */
export const Datastore = nedbModule as unknown as NedbDatastoreConstructor;
