import { ServiceError } from '@ars/contracts';
import { isInvalidCursorError } from '@ars/store';
import type { Page } from '@ars/store';

/** Runs a page read; a cursor this read did not make is `invalid_request`. */
export async function readPage<T>(method: string, read: () => Promise<Page<T>>): Promise<Page<T>> {
  try {
    return await read();
  } catch (error) {
    if (isInvalidCursorError(error)) {
      throw new ServiceError('invalid_request', `${method}: cursor is not a next_cursor of this read`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** `next_cursor` only when there is a next page (absent on the last). */
export function nextCursor(page: Page<unknown>): { next_cursor?: string } {
  return page.next_cursor === null ? {} : { next_cursor: page.next_cursor };
}

/** A pattern matching `text` literally. */
export function literalPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
