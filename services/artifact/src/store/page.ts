import { ServiceError } from '@ars/contracts';
import { isInvalidCursorError, paginate } from '@ars/store';
import type { Collection, Filter, PaginateOptions, StoreDocument } from '@ars/store';

/** One page of a list read: `next_cursor` absent on the last page. */
export interface PageOf<T> {
  readonly items: T[];
  readonly next_cursor?: string;
}

/** {@link paginate}, with a malformed or foreign cursor answered `invalid_request`. */
export async function pageOf<T extends StoreDocument>(
  collection: Collection<T>,
  filter: Filter<T>,
  options: PaginateOptions,
): Promise<PageOf<T>> {
  try {
    const page = await paginate(collection, filter, options);
    return page.next_cursor === null ? { items: page.items } : { items: page.items, next_cursor: page.next_cursor };
  } catch (error) {
    if (isInvalidCursorError(error)) throw new ServiceError('invalid_request', 'cursor: not a cursor of this list');
    throw error;
  }
}

/** A `$regex` source matching `text` literally. */
export function literalPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
