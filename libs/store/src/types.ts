/**
 * The document-store port. Services depend on these interfaces only; an
 * adapter (embedded, on nedb or SQLite, or MongoDB) implements them. The shapes follow the
 * MongoDB driver so the MongoDB adapter stays thin, restricted to what both
 * backends do the same way.
 *
 * Documents are plain JSON values with a string `_id`. Store instants as ISO
 * 8601 UTC strings (`new Date().toISOString()`: they sort and compare in
 * time order) or as epoch milliseconds; `Date` objects are not part of the
 * contract because the backends round-trip them differently.
 */

/** The adapters the store can run on. */
export const STORE_KINDS = ['embedded', 'mongodb'] as const;

/** `embedded` (nedb or SQLite files, or memory) or `mongodb` (the official driver). */
export type StoreKind = (typeof STORE_KINDS)[number];

/** The minimum every stored document has: a string `_id`. */
export interface StoreDocument {
  _id: string;
}

/** A document about to be inserted: `_id` may be left out (a random UUID is generated). */
export type OptionalId<T extends StoreDocument> = Omit<T, '_id'> & { _id?: string };

/** `1` ascending, `-1` descending. */
export type SortDirection = 1 | -1;

/** A key for dotted paths into nested documents or arrays (`meta.owner`, `steps.0.kind`). */
export type DottedPath = `${string}.${string}`;

/**
 * Sort by one or more fields, in the key order of the object
 * (`{ priority: -1, created_at: 1 }`). Without a sort the order is unspecified.
 */
export type Sort = Readonly<Record<string, SortDirection>>;

/**
 * Fields to include (`1`) or exclude (`0`); not both, except `_id: 0`.
 * Returned documents are then partial although typed as `T`, as in the driver.
 */
export type Projection = Readonly<Record<string, 0 | 1>>;

/** Index keys in order (`{ tenant: 1, user: 1, key: 1 }`). nedb ignores the direction. */
export type IndexSpec = Readonly<Record<string, SortDirection>>;

type ElementOf<V> = V extends readonly (infer E)[] ? E : never;

/**
 * Operators on one field. Semantics follow MongoDB: `null` matches null and
 * missing fields (in equality, `$eq`, `$in`), `$ne`/`$nin` also match missing
 * fields, and comparisons only match values of the same type.
 */
export interface FieldOperators<V> {
  $eq?: V | null;
  $ne?: V | null;
  $in?: readonly (V | null)[];
  $nin?: readonly (V | null)[];
  $gt?: V;
  $gte?: V;
  $lt?: V;
  $lte?: V;
  $exists?: boolean;
  /** A pattern (JavaScript syntax; keep to the subset PCRE shares) or a RegExp. */
  $regex?: string | RegExp;
  /** Flags for a string `$regex`: any of `i`, `m`, `s`. */
  $options?: string;
}

/**
 * What a filter may say about one field: a value (equality; for an array
 * field, an element or the whole array), a RegExp, or operators.
 */
export type Condition<V> = V | null | RegExp | FieldOperators<V> | ElementOf<V> | FieldOperators<ElementOf<V>>;

/**
 * A query. Keys are ANDed; `$or`/`$and` combine sub-filters. Supported
 * operators: equality, `$eq $ne $in $nin $gt $gte $lt $lte $exists $regex`
 * (+`$options`), `$or $and`. Anything else is refused with a {@link StoreError}
 * by both adapters, as is an `undefined` value anywhere in the filter (the
 * driver would silently drop it and match more than asked).
 */
export type Filter<T> = { [K in keyof T]?: Condition<T[K]> } & { [path: DottedPath]: unknown } & {
  $or?: readonly Filter<T>[];
  $and?: readonly Filter<T>[];
};

type NumericKeys<T> = { [K in keyof T]-?: NonNullable<T[K]> extends number ? K : never }[keyof T];
type ArrayKeys<T> = { [K in keyof T]-?: NonNullable<T[K]> extends readonly unknown[] ? K : never }[keyof T];

/**
 * An update made of operators only (no replacement documents):
 * `$set $unset $inc $push $setOnInsert`. `$push` takes a value or
 * `{ $each: [...] }`. `$setOnInsert` applies only when an upsert inserts.
 */
export interface Update<T> {
  $set?: Partial<Omit<T, '_id'>> & { [path: DottedPath]: unknown };
  $unset?: { [K in Exclude<keyof T, '_id'>]?: '' | 1 | true } & { [path: DottedPath]: '' | 1 | true };
  $inc?: { [K in NumericKeys<T>]?: number } & { [path: DottedPath]: number };
  $push?: { [K in ArrayKeys<T>]?: ElementOf<T[K]> | { $each: readonly ElementOf<T[K]>[] } } & {
    [path: DottedPath]: unknown;
  };
  $setOnInsert?: Partial<T> & { [path: DottedPath]: unknown };
}

/** Options of {@link Collection.find}. */
export interface FindOptions {
  sort?: Sort;
  /** At most this many documents; `0` or absent means no limit. */
  limit?: number;
  /** Skip this many documents after sorting. @default 0 */
  skip?: number;
  projection?: Projection;
}

/** Options of {@link Store.collection}. */
export interface CollectionOptions {
  /**
   * Reads (`find`, `findOne`) may be answered from memory while nothing can
   * have changed the collection: for small collections read on every run and
   * rarely written (configuration). The embedded sqlite engine keeps them
   * (every write to the collection, another connection's commit or a
   * rollback makes them stale); MongoDB and the nedb engine read every time.
   */
  cacheReads?: boolean;
}

/** Options of {@link Collection.findOne}. */
export interface FindOneOptions {
  /** Which document wins when several match. */
  sort?: Sort;
  projection?: Projection;
}

/** Options of {@link Collection.updateOne} and {@link Collection.updateMany}. */
export interface UpdateOptions {
  /**
   * Insert a document when nothing matches: built from the filter's
   * equalities, then `$setOnInsert`, then the other operators. @default false
   */
  upsert?: boolean;
}

/** Which version {@link Collection.findOneAndUpdate} returns. */
export type ReturnDocument = 'before' | 'after';

/** Options of {@link Collection.findOneAndUpdate}. */
export interface FindOneAndUpdateOptions extends UpdateOptions {
  /** @default 'before' (then an upsert that inserts returns null, as in MongoDB) */
  returnDocument?: ReturnDocument;
  /** Which document is updated when several match. */
  sort?: Sort;
}

/** Options of {@link Collection.createIndex}. */
export interface IndexOptions {
  /** Refuse a second document with the same key (a missing field counts as null). @default false */
  unique?: boolean;
  /** Leave out documents without the field. Single-field indexes only. @default false */
  sparse?: boolean;
}

/** Result of {@link Collection.insertOne}. */
export interface InsertOneResult {
  insertedId: string;
}

/** Result of {@link Collection.insertMany}. */
export interface InsertManyResult {
  insertedCount: number;
  /** In the order of the input documents. */
  insertedIds: string[];
}

/** Result of {@link Collection.updateOne} and {@link Collection.updateMany}. */
export interface UpdateResult {
  matchedCount: number;
  /** Documents whose content actually changed. */
  modifiedCount: number;
  upsertedCount: number;
  upsertedId: string | null;
}

/** Result of {@link Collection.deleteOne} and {@link Collection.deleteMany}. */
export interface DeleteResult {
  deletedCount: number;
}

/**
 * One collection of documents of type `T`. Every method may throw a
 * {@link StoreError}; writes refused by a unique index throw a
 * {@link DuplicateKeyError}. Returned documents are copies.
 */
export interface Collection<T extends StoreDocument> {
  readonly name: string;
  insertOne(document: OptionalId<T>): Promise<InsertOneResult>;
  /** The embedded adapter inserts all or none; MongoDB stops at the first failure. */
  insertMany(documents: readonly OptionalId<T>[]): Promise<InsertManyResult>;
  findOne(filter: Filter<T>, options?: FindOneOptions): Promise<T | null>;
  find(filter: Filter<T>, options?: FindOptions): Promise<T[]>;
  countDocuments(filter?: Filter<T>): Promise<number>;
  updateOne(filter: Filter<T>, update: Update<T>, options?: UpdateOptions): Promise<UpdateResult>;
  updateMany(filter: Filter<T>, update: Update<T>, options?: UpdateOptions): Promise<UpdateResult>;
  /** Atomic find-and-modify: no other write to the document interleaves. */
  findOneAndUpdate(filter: Filter<T>, update: Update<T>, options?: FindOneAndUpdateOptions): Promise<T | null>;
  deleteOne(filter: Filter<T>): Promise<DeleteResult>;
  deleteMany(filter: Filter<T>): Promise<DeleteResult>;
  /**
   * Idempotent; resolves to the index name (`field_1_other_-1`). An index on
   * the same keys with other `unique`/`sparse` options is rebuilt with these.
   */
  createIndex(keys: IndexSpec, options?: IndexOptions): Promise<string>;
  /**
   * Drops the index on exactly these keys (a repository that no longer
   * wants one); resolves false when there is none. The `_id` index stays.
   */
  dropIndex(keys: IndexSpec): Promise<boolean>;
}

/** A database owned by one service. */
export interface Store {
  readonly kind: StoreKind;
  /**
   * True when an index on several fields serves reads: equality on its
   * leading fields, then a range or a sort on the next (MongoDB, and the
   * embedded sqlite engine). False on the embedded nedb engine, which uses an
   * index only for equality on every one of its fields and never to sort:
   * there a compound index only costs every write, and callers scan instead.
   */
  readonly compoundIndexes: boolean;
  /** The database name (a directory for the embedded adapter). */
  readonly database: string;
  /**
   * The collection `name` (letters, digits, `_`, `-`, inner dots; at most
   * 100 characters). The same name always gives the same collection; options
   * asked by any caller apply to it from then on.
   */
  collection<T extends StoreDocument>(name: string, options?: CollectionOptions): Collection<T>;
  /**
   * Commits the writes made so far once the running code and its promise
   * continuations are done, instead of with the rest of this turn of the
   * event loop. For a write whose caller somebody waits on (a start's task):
   * a busy turn holds other work, and its end comes late. Only the embedded
   * sqlite engine batches a turn's writes, and it commits early only a batch
   * of a few operations: splitting a large one costs its later writes a
   * commit of their own. Elsewhere (and with no write under way) it does
   * nothing.
   */
  commitSoon(): void;
  /**
   * Finishes pending writes, compacts the embedded datafiles, releases
   * connections and timers. Idempotent; later calls on the store throw.
   */
  close(): Promise<void>;
}
