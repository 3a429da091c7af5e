import { maxPayloadOf } from '@ars/bus';
import type { PageBudget } from '@ars/store';
import { jsonBytes, replyBudgetBytes } from '../domain/reply-size.ts';
import type { ApiDeps } from './deps.ts';

/** The byte budget of one read reply on this service's bus connection (see `replyBudgetBytes`). */
export function readBudget(deps: Pick<ApiDeps, 'bus'>): number {
  return replyBudgetBytes(maxPayloadOf(deps.bus));
}

/** The views of one page's rows, and the page budget that sizes them. */
export interface PageViews<R, V> {
  /** The row as the reply carries it; made once per row. */
  view(row: R): V;
  /** A budget of `maxBytes` over the rows' views (JSON bytes, plus the comma between items). */
  budget(maxBytes: number): PageBudget<R>;
}

/** How a view too large for a reply on its own is made to fit: `shorten` it when over `maxBytes`. */
export interface ViewFit<V> {
  readonly maxBytes: number;
  shorten(view: V): V;
}

/**
 * Sizes a page by what its reply carries: each row's view is made and
 * measured once (twice only when `fit` had to shorten it), when the store's
 * pagination asks for its size, and handed out again for the reply.
 */
export function pageViews<R extends object, V>(view: (row: R) => V, fit?: ViewFit<V>): PageViews<R, V> {
  const made = new WeakMap<R, { readonly value: V; readonly bytes: number }>();
  const measured = (row: R) => {
    let entry = made.get(row);
    if (entry === undefined) {
      let value = view(row);
      let bytes = jsonBytes(value);
      if (fit !== undefined && bytes > fit.maxBytes) {
        value = fit.shorten(value);
        bytes = jsonBytes(value);
      }
      entry = { value, bytes: bytes + 1 };
      made.set(row, entry);
    }
    return entry;
  };
  return {
    view: (row) => measured(row).value,
    budget: (maxBytes) => ({ maxBytes, sizeOf: (row) => measured(row).bytes }),
  };
}
