import { nedbModel } from './nedb.ts';
import type { NedbDocument } from './nedb.ts';

const { deepCopy } = nedbModel;

/** Results kept per collection at most; past it the cache starts again empty (its readers ask a few shapes). */
export const READ_CACHE_ENTRIES = 512;

/** True for JSON data that `JSON.stringify` writes as it is: no `undefined`, Date, RegExp or class instance. */
function isPlainJson(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) return value.every(isPlainJson);
      if (Object.getPrototypeOf(value) !== Object.prototype) return false;
      for (const key in value) if (!isPlainJson((value as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      return false;
  }
}

/**
 * The key of a read: the operation, filter and options as JSON, or
 * undefined when any of them is not plain JSON (two different filters could
 * then write the same text, as `{ a: /x/ }` and `{ a: {} }` do): such a read
 * is not cached.
 */
export function readKey(operation: string, filter: unknown, options: object): string | undefined {
  const parts = [operation, filter, options];
  return isPlainJson(parts) ? JSON.stringify(parts) : undefined;
}

/**
 * The results of one collection's reads, kept while nothing can have changed
 * the collection: every write to it through this connection empties the
 * cache as it runs, and each result carries a stamp (the connection's
 * generation and SQLite's `data_version`, taken before the read) that
 * another connection's commit or a rolled-back write makes stale. Results
 * are filled only from committed data (no write batch open) and handed out
 * as copies. Internal to this package.
 */
export class ReadCache {
  readonly #results = new Map<string, { readonly stamp: string; readonly documents: NedbDocument[] }>();

  /** Forgets everything: the collection is being written. */
  clear(): void {
    this.#results.clear();
  }

  /**
   * Copies of the result kept for `key`, or undefined; `stamp` (a statement)
   * is asked only when there is one, so that a read never kept costs nothing.
   */
  get(key: string, stamp: () => string): NedbDocument[] | undefined {
    const kept = this.#results.get(key);
    if (kept === undefined) return undefined;
    if (kept.stamp !== stamp()) {
      this.#results.delete(key);
      return undefined;
    }
    return kept.documents.map((document) => deepCopy(document) as NedbDocument);
  }

  /** Keeps `documents` (the caller's own: a copy is kept) for `key`, read under `stamp`. */
  set(key: string, stamp: string, documents: readonly NedbDocument[]): void {
    if (this.#results.size >= READ_CACHE_ENTRIES) this.#results.clear();
    this.#results.set(key, { stamp, documents: documents.map((document) => deepCopy(document) as NedbDocument) });
  }
}
