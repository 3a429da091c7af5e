/**
 * `@ars/store`: the document-store port and its adapters. Services get a
 * {@link Store} from {@link openStore} and build their repositories on
 * {@link Collection}s; only this package imports `mongodb` and nedb.
 */
export { openStore } from './open-store.ts';
export { observeTransactions } from './transaction-timing.ts';
export { observeWrites } from './observed-writes.ts';
export type { TransactionObserver } from './transaction-timing.ts';
export type { OpenStoreOptions } from './open-store.ts';
export { DEFAULT_COMPACTION_INTERVAL_MS, DEFAULT_SYNC_INTERVAL_MS, EMBEDDED_ENGINES } from './embedded.ts';
export type { EmbeddedEngine } from './embedded.ts';
export { firstOf, paginate } from './paginate.ts';
export type { Page, PageBudget, PageDirection, PageScan, PaginateOptions } from './paginate.ts';
export {
  DuplicateKeyError,
  InvalidCursorError,
  STORE_ERROR_KINDS,
  StoreError,
  isDuplicateKeyError,
  isInvalidCursorError,
  isStoreError,
} from './errors.ts';
export type { StoreErrorKind, StoreErrorOptions } from './errors.ts';
export { STORE_KINDS } from './types.ts';
export type {
  Collection,
  CollectionOptions,
  Condition,
  DeleteResult,
  DottedPath,
  FieldOperators,
  Filter,
  FindOneAndUpdateOptions,
  FindOneOptions,
  FindOptions,
  IndexOptions,
  IndexSpec,
  InsertManyResult,
  InsertOneResult,
  OptionalId,
  Projection,
  ReturnDocument,
  Sort,
  SortDirection,
  Store,
  StoreDocument,
  StoreKind,
  Update,
  UpdateOptions,
  UpdateResult,
} from './types.ts';
