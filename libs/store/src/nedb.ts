import { createRequire } from 'node:module';
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

/**
 * The persistence object of a file-backed datastore. The embedded adapter
 * replaces its two write paths on the instance (see `embedded.ts`).
 */
export interface NedbPersistence {
  /** Appends the lines of changed documents (and index markers). */
  persistNewStateAsync(documents: readonly object[]): Promise<void>;
  /** Rewrites the whole datafile (crash-safe: temporary file, fsync, rename). */
  persistCachedDatabaseAsync(): Promise<void>;
}

/** One nedb datastore: a collection backed by one append-only file. */
export interface NedbDatastore {
  /** Set when `autoload` is on; rejects when the datafile cannot be loaded. */
  readonly autoloadPromise: Promise<void> | null;
  readonly persistence: NedbPersistence;
  /** Loads the datafile (compacting it); commands wait in nedb's queue until then. */
  loadDatabaseAsync(): Promise<void>;
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
  /** Takes the index's name: its field, or its fields sorted and comma-joined. */
  removeIndexAsync(fieldName: string): Promise<void>;
  /** The indexes by name (see `removeIndexAsync`), `_id` included. */
  readonly indexes: Readonly<
    Record<string, { readonly fieldName: string; readonly unique: boolean; readonly sparse: boolean }>
  >;
  /** The stored documents (not copies), in `_id` order. */
  getAllData(): NedbDocument[];
  compactDatafileAsync(): Promise<void>;
}

/**
 * nedb's document model: matching, modifiers, copies and ordering. The
 * adapter drives a datastore's in-memory state with these and the
 * datastore's internals ({@link NedbInternals}), not through its public,
 * queued API. Internal to this package.
 */
export const nedbModel = createRequire(import.meta.url)('@seald-io/nedb/lib/model.js') as {
  serialize(document: object): string;
  /** Parses one datafile line, turning `{"$$date": ms}` back into a `Date`. */
  deserialize(line: string): NedbDocument;
  /** Throws on a field name nedb refuses (a leading `$`, a dot), anywhere in the document. */
  checkObject(document: unknown): void;
  match(document: NedbDocument, query: NedbQuery): boolean;
  /** A modified deep copy; throws on a bad modifier or a bad resulting document. */
  modify(document: object, update: NedbQuery): NedbDocument;
  deepCopy<D>(document: D, strictKeys?: boolean): D;
  compareThings(a: unknown, b: unknown): number;
  getDotValue(document: object, path: string): unknown;
};

/**
 * The internals of a nedb 4.1 datastore (the version is pinned) that the
 * adapter uses to read and write synchronously. Each is what the public
 * method runs inside nedb's executor, minus the executor, the cursor and
 * the copies the adapter does not need: a write is one synchronous step
 * (candidates, match, modify, index update with rollback, append), so it is
 * atomic in the process without a queue hop per nedb call. The documents
 * they return are the stored ones: never hand them out.
 */
export interface NedbInternals {
  /** The stored documents an index offers for `query` (all of them without a usable index). */
  _getRawCandidates(query: NedbQuery): NedbDocument[];
  /** Replaces documents in every index; on a unique violation rolls back and throws (`errorType: 'uniqueViolated'`). */
  _updateIndexes(modifications: readonly { oldDoc: NedbDocument; newDoc: NedbDocument }[]): void;
  /** A checked deep copy with an `_id`. */
  _prepareDocumentForInsertion(document: NedbQuery): NedbDocument;
  _prepareDocumentForInsertion(documents: NedbQuery[]): NedbDocument[];
  /** Adds to every index, all or none; throws on a unique violation. */
  _insertInCache(prepared: NedbDocument | NedbDocument[]): void;
  _removeFromIndexes(document: NedbDocument): void;
}

/** True when `value` holds a `Date` anywhere (nedb writes those as `{"$$date": ms}`). */
function holdsDate(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (value instanceof Date) return true;
  if (Array.isArray(value)) return value.some(holdsDate);
  for (const key in value) if (holdsDate((value as Record<string, unknown>)[key])) return true;
  return false;
}

/**
 * One document as one datafile line, as nedb writes it. nedb's own
 * serialiser passes a replacer to `JSON.stringify` (a call into JavaScript
 * for every key, to write dates as `$$date` and to check key names again),
 * the largest single cost of a write. Documents here are JSON (instants are
 * strings or numbers) whose keys nedb already checked when it built them, so
 * a document without a `Date` is written by `JSON.stringify` alone, byte for
 * byte what nedb would write; one with a `Date` still goes through nedb's.
 */
export function serializeDocument(document: object): string {
  return holdsDate(document) ? nedbModel.serialize(document) : JSON.stringify(document);
}

/**
 * The document one {@link serializeDocument} line holds. `JSON.parse` alone
 * unless the line holds a date, as nedb writes it (document field names
 * cannot start with `$`, so the marker can only be a date).
 */
export function deserializeDocument(line: string): NedbDocument {
  return line.includes('"$$date"') ? nedbModel.deserialize(line) : (JSON.parse(line) as NedbDocument);
}

/** Constructor of {@link NedbDatastore}. */
export type NedbDatastoreConstructor = new (options: NedbOptions) => NedbDatastore & NedbInternals;

/** The nedb `Datastore` class. */
export const Datastore = nedbModule as unknown as NedbDatastoreConstructor;
