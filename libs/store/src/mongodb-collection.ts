import { randomUUID } from 'node:crypto';
import { MongoError, MongoNetworkError, MongoServerSelectionError } from 'mongodb';
import type { Collection as DriverCollection, Document, Filter as DriverFilter, UpdateFilter } from 'mongodb';
import { DuplicateKeyError, StoreError, isDuplicateKeyError, isStoreError } from './errors.ts';
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
import {
  checkFilter,
  checkFindOptions,
  checkIndex,
  checkSort,
  checkUpdate,
  isOperatorObject,
  prepareDocument,
} from './validate.ts';

const DUPLICATE_KEY_CODES = new Set([11000, 11001, 12582]);
/** IndexOptionsConflict, IndexKeySpecsConflict: an index on these keys exists with other options or name. */
const INDEX_CONFLICT_CODES = new Set([85, 86]);
/** The collection does not exist (yet). */
const NAMESPACE_NOT_FOUND = 26;
const RETRYABLE_LABELS = ['RetryableWriteError', 'TransientTransactionError', 'ResetPool'];
/** Upserts racing on a unique key may lose with E11000; the retry then finds the winner. */
const UPSERT_ATTEMPTS = 3;

function duplicateKeyOf(error: MongoError): { key: unknown } | undefined {
  const record = error as unknown as Record<string, unknown>;
  if (DUPLICATE_KEY_CODES.has(Number(error.code))) return { key: record.keyValue };
  const writeErrors = record.writeErrors;
  const first = (Array.isArray(writeErrors) ? writeErrors[0] : writeErrors) as
    { code?: number; err?: { keyValue?: unknown } } | undefined;
  if (first !== undefined && DUPLICATE_KEY_CODES.has(Number(first.code))) return { key: first.err?.keyValue };
  return undefined;
}

/** Maps a driver error to the store's errors. Internal to this package. */
export function toStoreError(error: unknown, collection: string, operation: string): StoreError {
  if (isStoreError(error)) return error;
  if (!(error instanceof MongoError)) {
    return new StoreError(`mongodb ${operation} on ${collection} failed`, { cause: error });
  }
  const duplicate = duplicateKeyOf(error);
  if (duplicate !== undefined) return new DuplicateKeyError(collection, { key: duplicate.key, cause: error });
  const retryable =
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    RETRYABLE_LABELS.some((label) => error.hasErrorLabel(label));
  return new StoreError(`mongodb ${operation} on ${collection} failed: ${error.message}`, { cause: error, retryable });
}

function regexOperators(pattern: RegExp): { $regex: string; $options?: string } {
  const options = pattern.flags.replace(/[^ims]/g, '');
  return options === '' ? { $regex: pattern.source } : { $regex: pattern.source, $options: options };
}

/**
 * Rewrites RegExp values as `$regex` strings with `$options`: the BSON
 * serialiser would send a `g` flag as `s` and drop `s`.
 */
function toDriverFilter(filter: object): DriverFilter<Document> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$or' || key === '$and') out[key] = (value as Record<string, unknown>[]).map(toDriverFilter);
    else if (value instanceof RegExp) out[key] = regexOperators(value);
    else if (isOperatorObject(value) && value.$regex instanceof RegExp)
      out[key] = { ...value, ...regexOperators(value.$regex) };
    else out[key] = value;
  }
  return out as DriverFilter<Document>;
}

function pinnedId(filter: Record<string, unknown>): boolean {
  return typeof filter._id === 'string';
}

/**
 * Gives an upserted document a string `_id` (the server would make an
 * ObjectId) unless the filter pins `_id` or `$setOnInsert` sets it.
 */
function withUpsertId(
  filter: Record<string, unknown>,
  update: Record<string, Record<string, unknown>>,
  upsert: boolean,
) {
  if (!upsert || pinnedId(filter) || update.$setOnInsert?._id !== undefined) return update;
  return { ...update, $setOnInsert: { ...update.$setOnInsert, _id: randomUUID() } };
}

/**
 * A collection on the official driver: a thin pass-through after the shared
 * validation, with string `_id`s and errors mapped. Internal to this package:
 * obtain one from `Store.collection`.
 */
export class MongoCollection<T extends StoreDocument> implements Collection<T> {
  readonly name: string;
  readonly #collection: DriverCollection<Document>;
  readonly #assertOpen: () => void;

  constructor(collection: DriverCollection<Document>, assertOpen: () => void) {
    this.name = collection.collectionName;
    this.#collection = collection;
    this.#assertOpen = assertOpen;
  }

  async #run<R>(operation: string, run: () => Promise<R>): Promise<R> {
    this.#assertOpen();
    try {
      return await run();
    } catch (error) {
      throw toStoreError(error, this.name, operation);
    }
  }

  /** Retries an upsert that lost a race on a unique index (see UPSERT_ATTEMPTS). */
  async #upsertable<R>(operation: string, upsert: boolean, run: () => Promise<R>): Promise<R> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.#run(operation, run);
      } catch (error) {
        if (!upsert || !isDuplicateKeyError(error) || attempt >= UPSERT_ATTEMPTS) throw error;
      }
    }
  }

  async insertOne(document: OptionalId<T>): Promise<InsertOneResult> {
    const prepared = prepareDocument(document);
    await this.#run('insertOne', () => this.#collection.insertOne(prepared as Document));
    return { insertedId: prepared._id };
  }

  async insertMany(documents: readonly OptionalId<T>[]): Promise<InsertManyResult> {
    const prepared = documents.map((document) => prepareDocument(document));
    if (prepared.length === 0) return { insertedCount: 0, insertedIds: [] };
    const result = await this.#run('insertMany', () => this.#collection.insertMany(prepared as Document[]));
    return { insertedCount: result.insertedCount, insertedIds: prepared.map((document) => document._id) };
  }

  async find(filter: Filter<T>, options: FindOptions = {}): Promise<T[]> {
    checkFilter(filter);
    checkFindOptions(options);
    const { sort, limit, skip, projection } = options;
    const found = await this.#run('find', () =>
      this.#collection
        .find(toDriverFilter(filter), {
          ...(sort !== undefined && { sort: { ...sort } }),
          ...(limit !== undefined && { limit }),
          ...(skip !== undefined && { skip }),
          ...(projection !== undefined && { projection: { ...projection } }),
        })
        .toArray(),
    );
    return found as unknown as T[];
  }

  async findOne(filter: Filter<T>, options: FindOneOptions = {}): Promise<T | null> {
    const [first] = await this.find(filter, { ...options, limit: 1 });
    return first ?? null;
  }

  async countDocuments(filter: Filter<T> = {}): Promise<number> {
    checkFilter(filter);
    return this.#run('countDocuments', () => this.#collection.countDocuments(toDriverFilter(filter)));
  }

  async updateOne(filter: Filter<T>, update: Update<T>, options: UpdateOptions = {}): Promise<UpdateResult> {
    return this.#update('updateOne', filter, update, options.upsert === true);
  }

  async updateMany(filter: Filter<T>, update: Update<T>, options: UpdateOptions = {}): Promise<UpdateResult> {
    return this.#update('updateMany', filter, update, options.upsert === true);
  }

  async #update(
    operation: 'updateOne' | 'updateMany',
    filter: Filter<T>,
    update: Update<T>,
    upsert: boolean,
  ): Promise<UpdateResult> {
    checkFilter(filter);
    const operators = withUpsertId(filter, checkUpdate(update), upsert);
    const result = await this.#upsertable(operation, upsert, () =>
      this.#collection[operation](toDriverFilter(filter), operators as UpdateFilter<Document>, { upsert }),
    );
    const upsertedId = result.upsertedId === null || result.upsertedId === undefined ? null : String(result.upsertedId);
    return {
      matchedCount: result.matchedCount,
      modifiedCount: result.modifiedCount,
      upsertedCount: result.upsertedCount,
      upsertedId,
    };
  }

  async findOneAndUpdate(
    filter: Filter<T>,
    update: Update<T>,
    options: FindOneAndUpdateOptions = {},
  ): Promise<T | null> {
    checkFilter(filter);
    checkSort(options.sort);
    const upsert = options.upsert === true;
    const operators = withUpsertId(filter, checkUpdate(update), upsert);
    const found = await this.#upsertable('findOneAndUpdate', upsert, () =>
      this.#collection.findOneAndUpdate(toDriverFilter(filter), operators as UpdateFilter<Document>, {
        upsert,
        returnDocument: options.returnDocument ?? 'before',
        includeResultMetadata: false,
        ...(options.sort !== undefined && { sort: { ...options.sort } }),
      }),
    );
    return found as unknown as T | null;
  }

  async deleteOne(filter: Filter<T>): Promise<DeleteResult> {
    checkFilter(filter);
    const result = await this.#run('deleteOne', () => this.#collection.deleteOne(toDriverFilter(filter)));
    return { deletedCount: result.deletedCount };
  }

  async deleteMany(filter: Filter<T>): Promise<DeleteResult> {
    checkFilter(filter);
    const result = await this.#run('deleteMany', () => this.#collection.deleteMany(toDriverFilter(filter)));
    return { deletedCount: result.deletedCount };
  }

  async createIndex(keys: IndexSpec, options: IndexOptions = {}): Promise<string> {
    const name = checkIndex(keys, options);
    // Only `true` options are sent: an explicit `false` could read as other options than an existing index's.
    const create = () =>
      this.#collection.createIndex(
        { ...keys },
        { name, ...(options.unique === true && { unique: true }), ...(options.sparse === true && { sparse: true }) },
      );
    return this.#run('createIndex', async () => {
      try {
        return await create();
      } catch (error) {
        if (!(error instanceof MongoError) || !INDEX_CONFLICT_CODES.has(Number(error.code))) throw error;
        // The same keys with other options (or under another name): rebuild it as asked.
        await this.#dropIndexesOn(keys);
        return create();
      }
    });
  }

  async dropIndex(keys: IndexSpec): Promise<boolean> {
    checkIndex(keys, {});
    if (Object.keys(keys).length === 1 && '_id' in keys) throw new StoreError('the _id index cannot be dropped');
    return this.#run('dropIndex', () => this.#dropIndexesOn(keys));
  }

  async #dropIndexesOn(keys: IndexSpec): Promise<boolean> {
    let existing: Document[];
    try {
      existing = await this.#collection.indexes();
    } catch (error) {
      if (error instanceof MongoError && Number(error.code) === NAMESPACE_NOT_FOUND) return false;
      throw error;
    }
    const wanted = JSON.stringify(Object.entries(keys));
    const matching = existing.filter((index) => JSON.stringify(Object.entries(index.key as object)) === wanted);
    for (const index of matching) await this.#collection.dropIndex(String(index.name));
    return matching.length > 0;
  }
}
