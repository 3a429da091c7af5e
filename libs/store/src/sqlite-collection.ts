import { hasProjection, project } from './cursor.ts';
import type { CursorOptions } from './cursor.ts';
import { DuplicateKeyError, StoreError, isDuplicateKeyError, isStoreError } from './errors.ts';
import { idBytes, indexIdentity } from './index-keys.ts';
import type { IndexDefinition } from './index-keys.ts';
import { applyModifiers } from './modify.ts';
import { serializeDocument } from './nedb.ts';
import type { NedbDocument, NedbQuery } from './nedb.ts';
import { toNedbQuery } from './nedb-query.ts';
import { isBusy } from './sqlite-connection.ts';
import type { Connection, TransactionMode } from './sqlite-connection.ts';
import { IndexEntries } from './sqlite-indexes.ts';
import { ReadCache, readKey } from './sqlite-read-cache.ts';
import { Reader } from './sqlite-reads.ts';
import { CollectionTables } from './sqlite-tables.ts';
import type {
  Collection,
  DeleteResult,
  Filter,
  FindOneAndUpdateOptions,
  FindOneOptions,
  FindOptions,
  IndexOptions,
  IndexSpec,
  InsertManyResult,
  InsertOneResult,
  OptionalId,
  StoreDocument,
  Update,
  UpdateOptions,
  UpdateResult,
} from './types.ts';
import { checkFilter, checkFindOptions, checkIndex, checkSort, checkUpdate, prepareDocument } from './validate.ts';
import {
  foundModifiers,
  noMatch,
  returnedDocument,
  toUpdateResult,
  upsertDocument,
  upsertedOutcome,
} from './write-outcome.ts';
import type { ApplyOptions, Outcome } from './write-outcome.ts';

/** What a sqlite collection needs from its store. Internal to this package. */
export interface SqliteCollectionParts {
  name: string;
  connection: Connection;
  /** Throws once the store is closed. */
  assertOpen: () => void;
}

/** The paths an update changes in a document it found: every operator's but `$setOnInsert`'s. */
function touchedPaths(operators: Record<string, Record<string, unknown>>): string[] {
  return Object.entries(operators).flatMap(([operator, paths]) =>
    operator === '$setOnInsert' ? [] : Object.keys(paths),
  );
}

/**
 * True for a filter fixing `_id` to one string: the reader fetches that one
 * row (one statement) whatever else the filter says, and uses no index.
 */
function isIdLookup(filter: unknown): boolean {
  return typeof (filter as { _id?: unknown } | null)?._id === 'string';
}

/**
 * A collection in one SQLite database, with the nedb engine's semantics:
 * filters, updates, sorts and projections run through nedb's model on
 * documents parsed from their JSON rows, after an index (or the `_id` key)
 * narrowed the candidates. Every operation is one transaction, run
 * synchronously: a write begins IMMEDIATE (holding the database's write
 * lock), so a find-and-modify is atomic across processes, and any failure
 * rolls the whole operation back. Internal to this package: obtain one
 * from `Store.collection`.
 */
export class SqliteCollection<T extends StoreDocument> implements Collection<T> {
  readonly name: string;
  readonly #connection: Connection;
  readonly #assertOpen: () => void;
  readonly #tables: CollectionTables;
  readonly #entries: IndexEntries;
  readonly #reader: Reader;
  /** True once the tables exist. */
  #created = false;
  /** Their creation, while in progress: concurrent first operations wait for the same one. */
  #creating: Promise<void> | undefined;
  /** The declared indexes as of {@link #generation}; reloaded when another connection committed. */
  #indexes: IndexDefinition[] = [];
  #generation = -1;
  /** Results of reads, when a caller asked for them to be kept (`CollectionOptions.cacheReads`). */
  #readCache: ReadCache | undefined;

  constructor(parts: SqliteCollectionParts) {
    this.name = parts.name;
    this.#connection = parts.connection;
    this.#assertOpen = parts.assertOpen;
    this.#tables = new CollectionTables(parts.connection, parts.name);
    this.#entries = new IndexEntries(this.#tables, parts.name);
    this.#reader = new Reader(this.#tables);
  }

  /** Keeps the results of reads from now on (see `CollectionOptions.cacheReads`). */
  cacheReads(): void {
    this.#readCache ??= new ReadCache();
  }

  /**
   * Runs `work` as one transaction, with the declared indexes up to date;
   * settles with its result or its failure as a StoreError. Once the
   * tables exist, the transaction starts within the call: operations run in
   * call order.
   */
  async #run<R>(mode: TransactionMode | 'one', operation: string, work: () => R): Promise<R> {
    try {
      this.#assertOpen();
      if (!this.#created) {
        this.#creating ??= this.#create().finally(() => (this.#creating = undefined));
        await this.#creating;
      }
      // A lookup by `_id` plans no index (`planFilter`): the cached ones may be stale for it.
      if (mode === 'one') return await this.#connection.readAlone(work);
      return await this.#connection.transaction(mode, () => {
        if (this.#generation !== this.#connection.generation) {
          this.#indexes = this.#tables.indexes();
          this.#generation = this.#connection.generation;
        }
        // Whatever the write turns out to change, the kept reads may no longer be so.
        if (mode === 'write') this.#readCache?.clear();
        return work();
      });
    } catch (error) {
      // What the rolled-back work changed in the cached indexes is not so in the database.
      this.#generation = -1;
      throw this.#toStoreError(error, operation);
    }
  }

  /**
   * Creates the tables on first use, in a transaction of their own (DDL
   * cannot join a read); on tables that exist, drops the index by `_id`
   * that earlier versions kept on the entries.
   */
  async #create(): Promise<void> {
    if (!this.#tables.exists()) await this.#connection.transaction('write', () => this.#tables.create());
    else if (this.#tables.hasLegacyIdIndex()) {
      await this.#connection.transaction('write', () => this.#tables.dropLegacyIdIndex());
    }
    this.#created = true;
  }

  #toStoreError(error: unknown, operation: string): StoreError {
    if (isStoreError(error)) return error;
    // Another process held the lock past the busy timeout: the same call may succeed later.
    const retryable = isBusy(error);
    const detail = error instanceof Error ? error.message : String(error);
    return new StoreError(`embedded ${operation} on ${this.name} failed: ${detail}`, { cause: error, retryable });
  }

  #select(filter: unknown, query: NedbQuery, options: CursorOptions): NedbDocument[] {
    return this.#reader.select(filter as Record<string, unknown>, query, options, this.#indexes);
  }

  /** The matching documents, projected as nedb's cursor does; fresh parses, so no copies are needed. */
  #find(filter: unknown, options: FindOptions): NedbDocument[] {
    checkFilter(filter);
    checkFindOptions(options);
    const selected = this.#select(filter, toNedbQuery(filter as NedbQuery), options);
    const projection = options.projection as Record<string, number> | undefined;
    return hasProjection(projection) ? selected.map((document) => project(document, projection)) : selected;
  }

  async find(filter: Filter<T>, options: FindOptions = {}): Promise<T[]> {
    const mode = isIdLookup(filter) && options.sort === undefined ? 'one' : 'read';
    return (await this.#read(mode, 'find', filter, options, () => this.#find(filter, options))) as unknown as T[];
  }

  async findOne(filter: Filter<T>, options: FindOneOptions = {}): Promise<T | null> {
    const mode = isIdLookup(filter) && options.sort === undefined ? 'one' : 'read';
    const [first] = await this.#read(mode, 'findOne', filter, options, () =>
      this.#find(filter, { ...options, limit: 1 }),
    );
    return (first ?? null) as T | null;
  }

  /**
   * A read, answered from the kept results when this collection keeps them
   * and nothing changed since (one `PRAGMA data_version`, no transaction;
   * none at all for a read never kept);
   * otherwise run, and kept when it read committed data. The stamp of a
   * kept result is taken before its statements: a commit by another
   * connection in between makes it stale, never wrongly fresh.
   */
  async #read(
    mode: 'one' | 'read',
    operation: string,
    filter: unknown,
    options: object,
    work: () => NedbDocument[],
  ): Promise<NedbDocument[]> {
    const cache = this.#readCache;
    const key = cache === undefined || !this.#created ? undefined : readKey(operation, filter, options);
    if (cache === undefined || key === undefined) return this.#run(mode, operation, work);
    let kept: NedbDocument[] | undefined;
    try {
      this.#assertOpen();
      kept = cache.get(key, () => this.#connection.readStamp());
    } catch {
      kept = undefined; // a closed store or a busy database: the read itself says what is wrong
    }
    if (kept !== undefined) return kept;
    return this.#run(mode, operation, () => {
      const stamp = this.#connection.readStamp();
      const documents = work();
      if (!this.#connection.writing) cache.set(key, stamp, documents);
      return documents;
    });
  }

  async countDocuments(filter: Filter<T> = {}): Promise<number> {
    return this.#run('read', 'countDocuments', () => {
      checkFilter(filter);
      return this.#reader.count(filter, toNedbQuery(filter as NedbQuery), this.#indexes);
    });
  }

  async insertOne(document: OptionalId<T>): Promise<InsertOneResult> {
    const prepared = prepareDocument(document);
    await this.#run('write', 'insertOne', () => this.#insert([prepared]));
    return { insertedId: prepared._id };
  }

  async insertMany(documents: readonly OptionalId<T>[]): Promise<InsertManyResult> {
    const prepared = documents.map((document) => prepareDocument(document));
    if (prepared.length === 0) return { insertedCount: 0, insertedIds: [] };
    await this.#run('write', 'insertMany', () => this.#insert(prepared));
    return { insertedCount: prepared.length, insertedIds: prepared.map((document) => document._id) };
  }

  /**
   * Stores `documents`; a taken `_id` or unique key throws. Their field
   * names were checked already, by `prepareDocument` (stricter than nedb's
   * check of an insertion) or, for an upsert's document, by the `modify`
   * that built it. They are this collection's own (`prepareDocument`'s deep
   * copies, or an upsert's new document), written here and then returned or
   * dropped, so they are stored without another copy.
   */
  #insert(documents: readonly NedbQuery[]): NedbDocument[] {
    // One document and no index to enter it in: its row is the write's one change.
    const last = documents.length === 1 && this.#indexes.length === 0;
    return documents.map((document) => {
      const stored = document as NedbDocument;
      const id = idBytes(stored._id);
      if (!this.#tables.insert(id, serializeDocument(stored), last)) {
        throw new DuplicateKeyError(this.name, { key: stored._id });
      }
      this.#entries.inserted(this.#indexes, id, stored);
      return stored;
    });
  }

  async updateOne(filter: Filter<T>, update: Update<T>, options: UpdateOptions = {}): Promise<UpdateResult> {
    return toUpdateResult(
      await this.#apply('updateOne', filter, update, { multi: false, upsert: options.upsert === true }),
    );
  }

  async updateMany(filter: Filter<T>, update: Update<T>, options: UpdateOptions = {}): Promise<UpdateResult> {
    return toUpdateResult(
      await this.#apply('updateMany', filter, update, { multi: true, upsert: options.upsert === true }),
    );
  }

  async findOneAndUpdate(
    filter: Filter<T>,
    update: Update<T>,
    options: FindOneAndUpdateOptions = {},
  ): Promise<T | null> {
    const outcome = await this.#apply('findOneAndUpdate', filter, update, {
      multi: false,
      upsert: options.upsert === true,
      sort: options.sort,
    });
    // The document after is this write's own (a modified fresh parse, or the upsert's new one): no copy.
    return returnedDocument(outcome, options.returnDocument, true) as T | null;
  }

  /** The one read-modify-write path of updateOne, updateMany and findOneAndUpdate. */
  #apply(operation: string, filter: unknown, update: unknown, options: ApplyOptions): Promise<Outcome> {
    return this.#run('write', operation, () => {
      checkFilter(filter);
      checkSort(options.sort);
      const operators = checkUpdate(update);
      const query = toNedbQuery(filter as NedbQuery);
      const before = this.#select(filter, query, { sort: options.sort, limit: options.multi ? 0 : 1 });
      if (before.length > 0) return this.#modify(before, operators);
      if (!options.upsert) return noMatch();
      const [inserted] = this.#insert([upsertDocument(filter as NedbQuery, operators)]);
      return upsertedOutcome(inserted);
    });
  }

  #modify(before: NedbDocument[], operators: Record<string, Record<string, unknown>>): Outcome {
    const modifiers = foundModifiers(operators);
    if (modifiers === null) return { before, after: before, matchedCount: before.length, upsertedId: null };
    // All modified first: a bad modifier throws before anything changed. The found documents are fresh
    // parses that nothing changes later: each new one shares with its old one what the update left alone.
    const changes = before.map((oldDoc) => ({
      id: idBytes(oldDoc._id),
      oldDoc,
      newDoc: applyModifiers(oldDoc, modifiers, { shared: true }),
    }));
    this.#entries.modified(this.#indexes, changes, touchedPaths(operators));
    // The index entries moved first: one document's row is the write's last change.
    const last = changes.length === 1;
    for (const { id, newDoc } of changes) this.#tables.replace(id, serializeDocument(newDoc), last);
    return { before, after: changes.map((change) => change.newDoc), matchedCount: before.length, upsertedId: null };
  }

  async deleteOne(filter: Filter<T>): Promise<DeleteResult> {
    return this.#remove('deleteOne', filter, false);
  }

  async deleteMany(filter: Filter<T>): Promise<DeleteResult> {
    return this.#remove('deleteMany', filter, true);
  }

  async #remove(operation: string, filter: unknown, multi: boolean): Promise<DeleteResult> {
    const deletedCount = await this.#run('write', operation, () => {
      checkFilter(filter);
      const doomed = this.#select(filter, toNedbQuery(filter as NedbQuery), multi ? {} : { limit: 1 });
      // Its entries removed first: one document's row is the write's last change.
      const last = doomed.length === 1;
      for (const document of doomed) {
        const id = idBytes(document._id);
        this.#entries.removed(this.#indexes, id, document);
        this.#tables.delete(id, last);
      }
      return doomed.length;
    });
    return { deletedCount };
  }

  /**
   * As the nedb engine: an index on the same fields with the same options
   * stays; with other options it is dropped and built again, and when the
   * new one cannot be built (duplicates) neither remains. The `_id` index
   * is the primary key: asking for it changes nothing.
   */
  async createIndex(keys: IndexSpec, options: IndexOptions = {}): Promise<string> {
    const name = checkIndex(keys, options);
    const fields = Object.keys(keys);
    const unique = options.unique === true;
    const sparse = options.sparse === true;
    if (fields.length === 1 && fields[0] === '_id') return name;
    const failure = await this.#run('write', 'createIndex', () => {
      const identity = indexIdentity(fields);
      const existing = this.#indexes.find((index) => index.name === identity);
      if (existing !== undefined && existing.unique === unique && existing.sparse === sparse) return null;
      if (existing !== undefined) this.#tables.forgetIndex(existing.ix);
      // Whatever it leaves (built, or dropped and refused), the next operation reloads the index list,
      // also one that joins this transaction; a rollback bumps the connection's generation.
      this.#generation = -1;
      const ix = this.#tables.declareIndex(identity, fields, unique, sparse);
      try {
        this.#entries.build({ ix, name: identity, fields, unique, sparse, unordered: false });
        return null;
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        // Keep the drop of the old index (nedb's order), not the half-built new one.
        this.#tables.forgetIndex(ix);
        return error;
      }
    });
    if (failure !== null) throw failure;
    return name;
  }

  async dropIndex(keys: IndexSpec): Promise<boolean> {
    checkIndex(keys, {});
    const fields = Object.keys(keys);
    if (fields.length === 1 && fields[0] === '_id') throw new StoreError('the _id index cannot be dropped');
    const dropped = await this.#run('write', 'dropIndex', () => {
      const existing = this.#indexes.find((index) => index.name === indexIdentity(fields));
      if (existing === undefined) return false;
      this.#tables.forgetIndex(existing.ix);
      this.#generation = -1;
      return true;
    });
    return dropped;
  }
}
