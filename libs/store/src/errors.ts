/**
 * Errors raised by the store. They describe storage outcomes, never HTTP:
 * the owning service maps them to its own `ServiceError` codes (a duplicate
 * key to `conflict`, an invalid cursor to `invalid_request`, anything else to
 * `internal` or `unavailable` according to `retryable`).
 *
 * Each error is branded with a global symbol so the `is*` checks work across
 * duplicate copies of this package.
 */

const STORE_ERROR_BRAND = Symbol.for('@ars/store/StoreError');

/** What went wrong, as a stable string carried by every {@link StoreError}. */
export const STORE_ERROR_KINDS = {
  /** The backend failed or refused the operation (I/O, network, bad operator). */
  failure: 'failure',
  /** A write would have violated a unique index (including `_id`). */
  duplicateKey: 'duplicate_key',
  /** A pagination cursor that this store did not produce for this query. */
  invalidCursor: 'invalid_cursor',
  /**
   * The call itself is malformed (a field name, an operator, an index spec the
   * store refuses): the same call fails again, so it is never worth retrying.
   */
  invalid: 'invalid',
} as const;

/** One of {@link STORE_ERROR_KINDS}. */
export type StoreErrorKind = (typeof STORE_ERROR_KINDS)[keyof typeof STORE_ERROR_KINDS];

/** Options shared by the store's error constructors. */
export interface StoreErrorOptions {
  /** The underlying backend error, kept for logs. */
  cause?: unknown;
  /**
   * True when the same call may succeed later (a lost connection, a server
   * election). @default false
   */
  retryable?: boolean;
}

/**
 * An adapter failure: the base of every error the store throws. The message
 * is for logs; it may name collections and fields but never holds documents.
 */
export class StoreError extends Error {
  /** The stable discriminator; see {@link STORE_ERROR_KINDS}. */
  readonly kind: StoreErrorKind;
  /** True when retrying the same call later may succeed. */
  readonly retryable: boolean;
  readonly [STORE_ERROR_BRAND]: StoreErrorKind;

  constructor(message: string, options: StoreErrorOptions = {}, kind: StoreErrorKind = STORE_ERROR_KINDS.failure) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StoreError';
    this.kind = kind;
    this.retryable = options.retryable ?? false;
    this[STORE_ERROR_BRAND] = kind;
  }
}

/**
 * A write refused by a unique index (MongoDB error 11000, nedb's
 * `uniqueViolated`). Never retryable: the same write fails again.
 */
export class DuplicateKeyError extends StoreError {
  /** The collection the write targeted. */
  readonly collection: string;
  /**
   * The conflicting key as the backend reported it, when it did: MongoDB gives
   * `{ field: value }`; nedb gives the value (an object for compound indexes).
   */
  readonly key: unknown;

  constructor(collection: string, options: { key?: unknown; cause?: unknown } = {}) {
    super(`duplicate key in collection ${collection}`, { cause: options.cause }, STORE_ERROR_KINDS.duplicateKey);
    this.name = 'DuplicateKeyError';
    this.collection = collection;
    this.key = options.key;
  }
}

/**
 * A pagination cursor that is malformed, truncated, or was produced for a
 * different sort. The caller maps it to `invalid_request`.
 */
export class InvalidCursorError extends StoreError {
  constructor(reason: string) {
    super(`invalid cursor: ${reason}`, {}, STORE_ERROR_KINDS.invalidCursor);
    this.name = 'InvalidCursorError';
  }
}

/** A malformed call (see {@link STORE_ERROR_KINDS}.invalid); `message` names what is wrong. */
export function invalidCall(message: string): StoreError {
  return new StoreError(message, {}, STORE_ERROR_KINDS.invalid);
}

function brandOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  return (value as Record<symbol, unknown>)[STORE_ERROR_BRAND];
}

/** True for a {@link StoreError} (any kind) from any copy of this package. */
export function isStoreError(value: unknown): value is StoreError {
  const brand = brandOf(value);
  return typeof brand === 'string';
}

/** True for a {@link DuplicateKeyError} from any copy of this package. */
export function isDuplicateKeyError(value: unknown): value is DuplicateKeyError {
  return brandOf(value) === STORE_ERROR_KINDS.duplicateKey;
}

/** True for an {@link InvalidCursorError} from any copy of this package. */
export function isInvalidCursorError(value: unknown): value is InvalidCursorError {
  return brandOf(value) === STORE_ERROR_KINDS.invalidCursor;
}
