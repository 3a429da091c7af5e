import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { DuplicateKeyError, StoreError, isStoreError } from './errors.ts';
import type { NedbCursor, NedbDatastore, NedbDocument, NedbQuery } from './nedb.ts';
import { toNedbQuery, upsertSeed } from './nedb-query.ts';
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
  Sort,
  StoreDocument,
  Update,
  UpdateOptions,
  UpdateResult,
} from './types.ts';
import { checkFilter, checkFindOptions, checkIndex, checkSort, checkUpdate, prepareDocument } from './validate.ts';

/** What an embedded collection needs from its store. Internal to this package. */
export interface EmbeddedCollectionParts {
  name: string;
  datastore: NedbDatastore;
  /** Settles when the datafile is loaded; rejects when it cannot be. */
  ready: Promise<void>;
  /** Every write of this collection goes through it. */
  queue: SerialQueue;
  /** Throws once the store is closed. */
  assertOpen: () => void;
}

interface Outcome {
  before: NedbDocument[];
  after: NedbDocument[];
  matchedCount: number;
  modifiedCount: number;
  upsertedId: string | null;
}

interface ApplyOptions {
  multi: boolean;
  upsert: boolean;
  sort?: Sort | undefined;
}

/**
 * A collection on one nedb datastore. Writes run one at a time through the
 * collection's queue, which makes find-and-modify and upsert atomic within
 * the process (the embedded adapter serves a single process per data
 * directory). Internal to this package: obtain one from `Store.collection`.
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

  #cursor(filter: unknown, options: FindOptions): NedbCursor<NedbDocument[]> {
    checkFilter(filter);
    checkFindOptions(options);
    const projection = options.projection as Record<string, number> | undefined;
    let cursor = this.#parts.datastore.findAsync(toNedbQuery(filter as NedbQuery), projection ?? {});
    if (options.sort !== undefined) cursor = cursor.sort(options.sort as Record<string, number>);
    if (options.skip) cursor = cursor.skip(options.skip);
    if (options.limit) cursor = cursor.limit(options.limit);
    return cursor;
  }

  async insertOne(document: OptionalId<T>): Promise<InsertOneResult> {
    const prepared = prepareDocument(document);
    await this.#write('insertOne', () => this.#parts.datastore.insertAsync(prepared));
    return { insertedId: prepared._id };
  }

  async insertMany(documents: readonly OptionalId<T>[]): Promise<InsertManyResult> {
    const prepared = documents.map((document) => prepareDocument(document));
    if (prepared.length === 0) return { insertedCount: 0, insertedIds: [] };
    await this.#write('insertMany', () => this.#parts.datastore.insertAsync(prepared));
    return { insertedCount: prepared.length, insertedIds: prepared.map((document) => document._id) };
  }

  async find(filter: Filter<T>, options: FindOptions = {}): Promise<T[]> {
    return (await this.#read('find', () => this.#cursor(filter, options))) as unknown as T[];
  }

  async findOne(filter: Filter<T>, options: FindOneOptions = {}): Promise<T | null> {
    const [first] = await this.#read('findOne', () => this.#cursor(filter, { ...options, limit: 1 }));
    return (first ?? null) as T | null;
  }

  async countDocuments(filter: Filter<T> = {}): Promise<number> {
    checkFilter(filter);
    return this.#read('countDocuments', () => this.#parts.datastore.countAsync(toNedbQuery(filter as NedbQuery)));
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
    const chosen = options.returnDocument === 'after' ? outcome.after : outcome.before;
    return (chosen[0] ?? null) as T | null;
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
      const existing = datastore.indexes[nedbIndexName(fields)];
      if (existing !== undefined && existing.unique === unique && existing.sparse === sparse) return;
      if (existing !== undefined) await datastore.removeIndexAsync(nedbIndexName(fields));
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
      const name = nedbIndexName(fields);
      if (this.#parts.datastore.indexes[name] === undefined) return false;
      await this.#parts.datastore.removeIndexAsync(name);
      return true;
    });
  }

  async #remove(operation: string, filter: unknown, multi: boolean): Promise<DeleteResult> {
    checkFilter(filter);
    const query = toNedbQuery(filter as NedbQuery);
    const deletedCount = await this.#write(operation, () => this.#parts.datastore.removeAsync(query, { multi }));
    return { deletedCount };
  }

  /** The one read-modify-write path of updateOne, updateMany and findOneAndUpdate. */
  async #apply(operation: string, filter: unknown, update: unknown, options: ApplyOptions): Promise<Outcome> {
    checkFilter(filter);
    checkSort(options.sort);
    const operators = checkUpdate(update);
    const query = toNedbQuery(filter as NedbQuery);
    return this.#write(operation, async () => {
      let cursor = this.#parts.datastore.findAsync(query);
      if (options.sort !== undefined) cursor = cursor.sort(options.sort as Record<string, number>);
      if (!options.multi) cursor = cursor.limit(1);
      const before = await cursor;
      if (before.length > 0) return this.#modify(before, operators);
      if (options.upsert) return this.#insertUpserted(filter as NedbQuery, operators);
      return { before: [], after: [], matchedCount: 0, modifiedCount: 0, upsertedId: null };
    });
  }

  async #modify(before: NedbDocument[], operators: Record<string, Record<string, unknown>>): Promise<Outcome> {
    const { $setOnInsert: _onInsertOnly, ...modifiers } = operators;
    // nedb reads an empty update as "replace with {}": nothing to apply.
    if (Object.keys(modifiers).length === 0) {
      return { before, after: before, matchedCount: before.length, modifiedCount: 0, upsertedId: null };
    }
    const ids = before.map((document) => document._id);
    const result = await this.#parts.datastore.updateAsync({ _id: { $in: ids } }, modifiers, {
      multi: true,
      returnUpdatedDocs: true,
    });
    const updated = new Map((result.affectedDocuments as NedbDocument[]).map((document) => [document._id, document]));
    const after = before.map((document) => updated.get(document._id) ?? document);
    const modifiedCount = before.filter((document, index) => !isDeepStrictEqual(document, after[index])).length;
    return { before, after, matchedCount: before.length, modifiedCount, upsertedId: null };
  }

  /**
   * Inserts the upserted document through nedb's own upsert so nedb's
   * modifier engine builds it: the query is the seed (filter equalities and
   * `_id`) plus a clause that never matches, which forces the insert branch;
   * nedb strips `$` keys from the query before applying the modifiers.
   * `$setOnInsert` becomes part of `$set` because this is an insert.
   */
  async #insertUpserted(filter: NedbQuery, operators: Record<string, Record<string, unknown>>): Promise<Outcome> {
    const { _id: seedId, ...seed } = upsertSeed(filter);
    const { $setOnInsert: onInsert = {}, $set: set = {}, ...others } = operators;
    const { _id: onInsertId, ...onInsertFields } = onInsert;
    const id = typeof seedId === 'string' ? seedId : typeof onInsertId === 'string' ? onInsertId : randomUUID();
    const result = await this.#parts.datastore.updateAsync(
      { _id: id, ...seed, $and: [{ _id: { $in: [] } }] },
      { ...others, $set: { ...onInsertFields, ...set } },
      { upsert: true, returnUpdatedDocs: true },
    );
    const inserted = result.affectedDocuments as NedbDocument;
    return { before: [], after: [inserted], matchedCount: 0, modifiedCount: 0, upsertedId: id };
  }
}

/** nedb's name of an index: its field, or its fields sorted and comma-joined (directions do not count). */
function nedbIndexName(fields: readonly string[]): string {
  return [...fields].sort().join(',');
}

function toUpdateResult(outcome: Outcome): UpdateResult {
  return {
    matchedCount: outcome.matchedCount,
    modifiedCount: outcome.modifiedCount,
    upsertedCount: outcome.upsertedId === null ? 0 : 1,
    upsertedId: outcome.upsertedId,
  };
}
