import type { Collection, Store, StoreDocument } from './types.ts';

/**
 * A store whose collections named in `collections` tell `onWrite` of every
 * write once it settled, succeeded or not (a failed `updateMany` on MongoDB
 * may have changed part of what it matched): for a service whose readers
 * elsewhere keep what they derived from those collections (the effective
 * configuration of runs). Reads, index changes and the other collections
 * pass through untouched; `onWrite` runs before the write's caller resumes.
 */
export function observeWrites(
  store: Store,
  collections: Iterable<string>,
  onWrite: (collection: string) => void,
): Store {
  const observed = new Set(collections);
  return {
    get kind() {
      return store.kind;
    },
    get compoundIndexes() {
      return store.compoundIndexes;
    },
    get database() {
      return store.database;
    },
    collection<T extends StoreDocument>(...args: Parameters<Store['collection']>): Collection<T> {
      const inner = store.collection<T>(...args);
      return observed.has(inner.name) ? observedCollection(inner, onWrite) : inner;
    },
    commitSoon: () => store.commitSoon(),
    close: () => store.close(),
  };
}

function observedCollection<T extends StoreDocument>(
  inner: Collection<T>,
  onWrite: (collection: string) => void,
): Collection<T> {
  const told = <R>(write: Promise<R>): Promise<R> => write.finally(() => onWrite(inner.name));
  return {
    name: inner.name,
    insertOne: (document) => told(inner.insertOne(document)),
    insertMany: (documents) => told(inner.insertMany(documents)),
    findOne: (filter, options) => inner.findOne(filter, options),
    find: (filter, options) => inner.find(filter, options),
    countDocuments: (filter) => inner.countDocuments(filter),
    updateOne: (filter, update, options) => told(inner.updateOne(filter, update, options)),
    updateMany: (filter, update, options) => told(inner.updateMany(filter, update, options)),
    findOneAndUpdate: (filter, update, options) => told(inner.findOneAndUpdate(filter, update, options)),
    deleteOne: (filter) => told(inner.deleteOne(filter)),
    deleteMany: (filter) => told(inner.deleteMany(filter)),
    createIndex: (keys, options) => inner.createIndex(keys, options),
    dropIndex: (keys) => inner.dropIndex(keys),
  };
}
