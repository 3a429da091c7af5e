import { MongoClient } from 'mongodb';
import type { Db, MongoClientOptions } from 'mongodb';
import { StoreError } from './errors.ts';
import { MongoCollection, toStoreError } from './mongodb-collection.ts';
import type { Collection, Store, StoreDocument } from './types.ts';
import { assertCollectionName, assertDatabaseName } from './validate.ts';

/** Options of {@link openMongoStore}. */
export interface MongoStoreOptions {
  /** A `mongodb://` or `mongodb+srv://` connection string. */
  mongoUrl: string;
  /** The service's own database. */
  database: string;
  /**
   * Extra driver options. `ignoreUndefined` is always on so that an
   * `undefined` member is dropped, as the embedded adapter does.
   */
  clientOptions?: MongoClientOptions;
}

/** The MongoDB adapter: one client, one database per service. */
class MongoStore implements Store {
  readonly kind = 'mongodb' as const;
  readonly compoundIndexes = true;
  readonly database: string;
  readonly #client: MongoClient;
  readonly #db: Db;
  readonly #collections = new Map<string, MongoCollection<StoreDocument>>();
  #closing: Promise<void> | undefined;

  constructor(client: MongoClient, database: string) {
    this.#client = client;
    this.database = database;
    this.#db = client.db(database);
  }

  readonly #assertOpen = (): void => {
    // The driver would silently reconnect a closed client; refuse instead.
    if (this.#closing !== undefined) throw new StoreError(`store ${this.database} is closed`);
  };

  collection<T extends StoreDocument>(name: string): Collection<T> {
    this.#assertOpen();
    assertCollectionName(name);
    let collection = this.#collections.get(name);
    if (collection === undefined) {
      collection = new MongoCollection<StoreDocument>(this.#db.collection(name), this.#assertOpen);
      this.#collections.set(name, collection);
    }
    return collection as unknown as Collection<T>;
  }

  /** Each write is acknowledged on its own: nothing waits for a batch. */
  commitSoon(): void {}

  close(): Promise<void> {
    this.#closing ??= this.#client.close().catch((error: unknown) => {
      throw toStoreError(error, '*', 'close');
    });
    return this.#closing;
  }
}

/**
 * Connects to MongoDB and opens the database `database`.
 * @throws StoreError (retryable when the server could not be reached)
 */
export async function openMongoStore(options: MongoStoreOptions): Promise<Store> {
  assertDatabaseName(options.database);
  let client: MongoClient;
  try {
    client = new MongoClient(options.mongoUrl, { ...options.clientOptions, ignoreUndefined: true });
  } catch (error) {
    throw new StoreError('invalid MongoDB connection string', { cause: error });
  }
  try {
    await client.connect();
  } catch (error) {
    await client.close().catch(() => undefined);
    throw toStoreError(error, '*', 'connect');
  }
  return new MongoStore(client, options.database);
}
