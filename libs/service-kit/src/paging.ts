import { ServiceError } from '@ars/contracts';
import { isInvalidCursorError, paginate } from '@ars/store';
import type { Collection, Filter, Page, PaginateOptions, StoreDocument } from '@ars/store';

/** One page of a list read, as it goes on the wire: `next_cursor` absent on the last page. */
export interface PageOf<T> {
  readonly items: T[];
  readonly next_cursor?: string;
}

/**
 * Runs a page read; a cursor this read did not make (malformed, or made for
 * another sort) is answered `invalid_request` instead of surfacing a store error.
 */
export async function readPage<T>(method: string, read: () => Promise<Page<T>>): Promise<Page<T>> {
  try {
    return await read();
  } catch (error) {
    if (isInvalidCursorError(error)) {
      throw new ServiceError('invalid_request', `${method}: cursor is not a next_cursor of this read`, { cause: error });
    }
    throw error;
  }
}

/** {@link paginate} through {@link readPage}, shaped for the wire. */
export async function pageOf<T extends StoreDocument>(
  collection: Collection<T>,
  filter: Filter<T>,
  options: PaginateOptions<T>,
  method = 'list',
): Promise<PageOf<T>> {
  const page = await readPage(method, () => paginate(collection, filter, options));
  return page.next_cursor === null ? { items: page.items } : { items: page.items, next_cursor: page.next_cursor };
}

/** A `$regex` source matching `text` literally (free-text filters must not be patterns). */
export function literalPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
