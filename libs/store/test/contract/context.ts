import type { Collection, Store } from '../../src/index.ts';

/** Where the suite runs: one per test, made by the adapter's factory. */
export interface ContractTarget {
  /** Opens the store; after `close()` a new call opens the same data again. */
  open(): Promise<Store>;
  /** Removes whatever the target created (temporary directory, database). */
  cleanup(): Promise<void>;
}

/** What each contract section sees. */
export interface ContractContext {
  /** True when data outlives `close()` (files on disk, a server); known when the suite is declared. */
  readonly durable: boolean;
  /** The store open for the current test. */
  store(): Store;
  target(): ContractTarget;
  /** Closes the current store and opens the target again. */
  reopen(): Promise<Store>;
}

/** The document shape most contract tests use. */
export interface Item {
  _id: string;
  name: string;
  n?: number;
  tags?: string[];
  meta?: { owner?: string; level?: number };
  at?: string;
  note?: string | null;
}

/** The `items` collection of the current store. */
export function items(context: ContractContext): Collection<Item> {
  return context.store().collection<Item>('items');
}

/** Sorted `_id`s, to compare result sets whose order is unspecified. */
export function idsOf(documents: readonly { _id: string }[]): string[] {
  return documents.map((document) => document._id).sort();
}

/** Sorted names, to compare result sets whose order is unspecified. */
export function namesOf(documents: readonly { name?: string }[]): string[] {
  return documents.map((document) => document.name ?? '').sort();
}
