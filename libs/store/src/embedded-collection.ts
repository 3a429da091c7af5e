import { hasProjection, project, selectMatching } from './cursor.ts';
import type { CursorOptions } from './cursor.ts';
import { DuplicateKeyError, StoreError, isStoreError } from './errors.ts';
import { indexIdentity } from './index-keys.ts';
import { applyModifiers } from './modify.ts';
import { nedbModel } from './nedb.ts';
import type { NedbDatastore, NedbDocument, NedbInternals, NedbQuery } from './nedb.ts';
import { toNedbQuery } from './nedb-query.ts';
import type { SerialQueue } from './serial-queue.ts';
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

/** What an embedded collection needs from its store. Internal to this package. */
export interface EmbeddedCollectionParts {
  name: string;
  datastore: NedbDatastore & NedbInternals;
  /** Settles when the datafile is loaded; rejects when it cannot be. */
  ready: Promise<void>;
  /** Every write of this collection goes through it. */
  queue: SerialQueue;
  /**
   * Appends changed documents (or deletion markers) to the datafile before
   * returning; throws when it cannot (nothing of the lines stays). A no-op
   * in memory.
   */
  append: (lines: readonly object[]) => void;
  /** Throws once the store is closed. */
  assertOpen: () => void;
}

const { deepCopy } = nedbModel;

const RANGE_OPERATORS = ['$gt', '$gte', '$lt', '$lte'];

/**
 * True when nedb may read `query`'s candidates from a range of an index:
 * its `getBetweenBounds` yields a document once per key it has in the
 * range (an array field gives several), and a document selected twice
 * would be counted, modified and removed twice. Other reads never repeat
 * one, and deduplicating every candidate list would cost a set over each
 * scan.
 */
function readsRange(query: NedbQuery, indexes: Readonly<Record<string, unknown>>): boolean {
  for (const [field, condition] of Object.entries(query)) {
    if (indexes[field] === undefined || typeof condition !== 'object' || condition === null) continue;
    if (RANGE_OPERATORS.some((operator) => Object.hasOwn(condition, operator))) return true;
  }
  return false;
}

/**
 * A collection on one nedb datastore, driven through its internals: a read
 * matches, sorts and copies the stored documents in one synchronous step; a
 * write finds, modifies, re-indexes and appends in one synchronous step, so
 * it is atomic in the process (the embedded adapter serves a single process
 * per data directory). Writes still pass the collection's queue, which
 * keeps them out of the asynchronous work on the same datastore (loading,
 * index changes, compaction). Measured on the runs benchmark: nedb's public
 * API (its executor queue, cursors and the copies of a find-then-update)
 * made an update of a run's task about 60 µs. Internal to this package:
 * obtain one from `Store.collection`.
 */
export class EmbeddedCollection<T extends StoreDocument> implements Collection<T> {
  readonly name: string;
  readonly #parts: EmbeddedCollectionParts;

  constructor(parts: EmbeddedCollectionParts) {
    this.name = parts.name;
    this.#parts = parts;
  }

  #toStoreError(error: unknown, operation: string): StoreError {
    if (isStoreError(error)) return error;
    const record = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
    if (record.errorType === 'uniqueViolated')
      return new DuplicateKeyError(this.name, { key: record.key, cause: error });
    const detail = error instanceof Error ? error.message : String(error);
    return new StoreError(`embedded ${operation} on ${this.name} failed: ${detail}`, { cause: error });
  }

  async #read<R>(operation: string, run: () => PromiseLike<R>): Promise<R> {
    this.#parts.assertOpen();
    try {
      await this.#parts.ready;
      return await run();
    } catch (error) {
      throw this.#toStoreError(error, operation);
    }
  }

  #write<R>(operation: string, run: () => Promise<R>): Promise<R> {
    this.#parts.assertOpen();
    return this.#parts.queue.run(async () => {
      try {
        await this.#parts.ready;
        return await run();
      } catch (error) {
        throw this.#toStoreError(error, operation);
      }
    });
  }

  /**
   * The stored documents matching `query`, as nedb's cursor selects them
   * (sort, then skip and limit), without copies: for the adapter only.
   */
  #select(query: NedbQuery, options: CursorOptions): NedbDocument[] {
    const { datastore } = this.#parts;
    const candidates = datastore._getRawCandidates(query);
    const distinct = readsRange(query, datastore.indexes) ? [...new Set(candidates)] : candidates;
    return selectMatching(distinct, query, options);
  }

  /** Copies of the matching documents, projected as nedb's cursor does. */
  #find(filter: unknown, options: FindOptions): NedbDocument[] {
    checkFilter(filter);
    checkFindOptions(options);
    const selected = this.#select(toNedbQuery(filter as NedbQuery), options);
    const projection = options.projection as Record<string, number> | undefined;
    if (!hasProjection(projection)) return selected.map((d) => deepCopy(d));
    return selected.map((d) => deepCopy(project(d, projection)));
  }

  async insertOne(document: OptionalId<T>): Promise<InsertOneResult> {
    const prepared = prepareDocument(document);
    await this.#write('insertOne', async () => this.#insert([prepared]));
    return { insertedId: prepared._id };
  }

  async insertMany(documents: readonly OptionalId<T>[]): Promise<InsertManyResult> {
    const prepared = documents.map((document) => prepareDocument(document));
    if (prepared.length === 0) return { insertedCount: 0, insertedIds: [] };
    await this.#write('insertMany', async () => this.#insert(prepared));
    return { insertedCount: prepared.length, insertedIds: prepared.map((document) => document._id) };
  }

  /** Indexes all or none of `documents` (a unique violation throws), then appends them. */
  #insert(documents: readonly NedbQuery[]): NedbDocument[] {
    const { datastore } = this.#parts;
    const stored = datastore._prepareDocumentForInsertion([...documents]);
    datastore._insertInCache(stored);
    this.#appendOrUndo(stored, () => {
      for (const document of stored) datastore._removeFromIndexes(document);
    });
    return stored;
  }

  /** Appends `lines`; when that fails, `undo` takes the in-memory change back and the failure is rethrown. */
  #appendOrUndo(lines: readonly object[], undo: () => void): void {
    if (lines.length === 0) return;
    try {
      this.#parts.append(lines);
    } catch (error) {
      undo();
      throw error;
    }
  }

  async find(filter: Filter<T>, options: FindOptions = {}): Promise<T[]> {
    return (await this.#read('find', async () => this.#find(filter, options))) as unknown as T[];
  }

  async findOne(filter: Filter<T>, options: FindOneOptions = {}): Promise<T | null> {
    const [first] = await this.#read('findOne', async () => this.#find(filter, { ...options, limit: 1 }));
    return (first ?? null) as T | null;
  }

  async countDocuments(filter: Filter<T> = {}): Promise<number> {
    checkFilter(filter);
    return this.#read('countDocuments', async () => this.#select(toNedbQuery(filter as NedbQuery), {}).length);
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
    return returnedDocument(outcome, options.returnDocument) as T | null;
  }

  async deleteOne(filter: Filter<T>): Promise<DeleteResult> {
    return this.#remove('deleteOne', filter, false);
  }

  async deleteMany(filter: Filter<T>): Promise<DeleteResult> {
    return this.#remove('deleteMany', filter, true);
  }

  async createIndex(keys: IndexSpec, options: IndexOptions = {}): Promise<string> {
    const name = checkIndex(keys, options);
    const fields = Object.keys(keys);
    const unique = options.unique === true;
    const sparse = options.sparse === true;
    await this.#write('createIndex', async () => {
      const { datastore } = this.#parts;
      const existing = datastore.indexes[indexIdentity(fields)];
      if (existing !== undefined && existing.unique === unique && existing.sparse === sparse) return;
      if (existing !== undefined) await datastore.removeIndexAsync(indexIdentity(fields));
      await datastore.ensureIndexAsync({
        fieldName: fields.length === 1 ? (fields[0] as string) : fields,
        unique,
        sparse,
      });
    });
    return name;
  }

  async dropIndex(keys: IndexSpec): Promise<boolean> {
    checkIndex(keys, {});
    const fields = Object.keys(keys);
    if (fields.length === 1 && fields[0] === '_id') throw new StoreError('the _id index cannot be dropped');
    return this.#write('dropIndex', async () => {
      const name = indexIdentity(fields);
      if (this.#parts.datastore.indexes[name] === undefined) return false;
      await this.#parts.datastore.removeIndexAsync(name);
      return true;
    });
  }

  async #remove(operation: string, filter: unknown, multi: boolean): Promise<DeleteResult> {
    checkFilter(filter);
    const query = toNedbQuery(filter as NedbQuery);
    const deletedCount = await this.#write(operation, async () => {
      const { datastore } = this.#parts;
      const doomed = this.#select(query, multi ? {} : { limit: 1 });
      for (const document of doomed) datastore._removeFromIndexes(document);
      const markers = doomed.map((document) => ({ $$deleted: true, _id: document._id }));
      this.#appendOrUndo(markers, () => datastore._insertInCache(doomed));
      return doomed.length;
    });
    return { deletedCount };
  }

  /** The one read-modify-write path of updateOne, updateMany and findOneAndUpdate. */
  async #apply(operation: string, filter: unknown, update: unknown, options: ApplyOptions): Promise<Outcome> {
    checkFilter(filter);
    checkSort(options.sort);
    const operators = checkUpdate(update);
    const query = toNedbQuery(filter as NedbQuery);
    return this.#write(operation, async () => {
      const before = this.#select(query, { sort: options.sort, limit: options.multi ? 0 : 1 });
      if (before.length > 0) return this.#modify(before, operators);
      if (options.upsert) return this.#insertUpserted(filter as NedbQuery, operators);
      return noMatch();
    });
  }

  #modify(before: NedbDocument[], operators: Record<string, Record<string, unknown>>): Outcome {
    const modifiers = foundModifiers(operators);
    if (modifiers === null) {
      const copies = before.map((document) => deepCopy(document));
      return { before: copies, after: before, matchedCount: before.length, upsertedId: null };
    }
    // All modified first: a bad modifier throws before anything changed.
    const { datastore } = this.#parts;
    const modifications = before.map((oldDoc) => ({ oldDoc, newDoc: applyModifiers(oldDoc, modifiers) }));
    datastore._updateIndexes(modifications);
    const after = modifications.map((m) => m.newDoc);
    this.#appendOrUndo(after, () =>
      datastore._updateIndexes(modifications.map(({ oldDoc, newDoc }) => ({ oldDoc: newDoc, newDoc: oldDoc }))),
    );
    // The old documents left the indexes: nothing else holds them.
    return { before, after, matchedCount: before.length, upsertedId: null };
  }

  /** Inserts the document an upsert builds (a unique violation throws). */
  #insertUpserted(filter: NedbQuery, operators: Record<string, Record<string, unknown>>): Outcome {
    const [inserted] = this.#insert([upsertDocument(filter, operators)]);
    return upsertedOutcome(inserted);
  }
}
