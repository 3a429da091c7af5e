import { useState } from 'react';
import { useLoad } from './use-load.ts';

/** A page of a list method: its items and the cursor of the next page, if any. */
export interface CursorPage<T> {
  readonly items: readonly T[];
  readonly next_cursor?: string;
}

/** A paged list: the current page's load plus moves between pages. */
export interface CursorPages<T, P extends CursorPage<T>> {
  readonly data: P | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  /** 1-based number of the page shown. */
  readonly pageNumber: number;
  readonly hasNext: boolean;
  readonly hasPrevious: boolean;
  readonly next: () => void;
  readonly previous: () => void;
  /** Back to the first page (after a filter change or a write that may move rows). */
  readonly first: () => void;
  readonly reload: () => Promise<P | undefined>;
}

/**
 * Pages through a cursor-paged method (`next_cursor` in, `cursor` out): the
 * cursors of the pages seen are kept, so Previous goes back without the
 * method paging backwards. A change of `deps` starts at the first page.
 */
export function useCursorPages<T, P extends CursorPage<T>>(
  load: (cursor: string | undefined) => Promise<P>,
  deps: readonly unknown[],
): CursorPages<T, P> {
  // cursors[i] opens page i + 1 (undefined: the first page).
  const [state, setState] = useState<{ key: string; cursors: readonly (string | undefined)[] }>({
    key: '',
    cursors: [undefined],
  });
  const key = JSON.stringify(deps);
  const cursors = state.key === key ? state.cursors : [undefined];
  const cursor = cursors[cursors.length - 1];
  const loaded = useLoad(() => load(cursor), [...deps, cursor, cursors.length]);
  const nextCursor = loaded.data?.next_cursor;
  return {
    data: loaded.data,
    error: loaded.error,
    loading: loaded.loading,
    pageNumber: cursors.length,
    hasNext: nextCursor !== undefined && !loaded.loading,
    hasPrevious: cursors.length > 1,
    next: () => {
      if (nextCursor !== undefined) setState({ key, cursors: [...cursors, nextCursor] });
    },
    previous: () => setState({ key, cursors: cursors.slice(0, Math.max(1, cursors.length - 1)) }),
    first: () => setState({ key, cursors: [undefined] }),
    reload: loaded.reload,
  };
}

/** Previous / next page buttons of a {@link useCursorPages} list, labelled for the list they page. */
export function Pager({
  pages,
  label,
}: {
  readonly pages: CursorPages<unknown, CursorPage<unknown>>;
  readonly label: string;
}) {
  if (!pages.hasNext && !pages.hasPrevious) return null;
  return (
    <nav className="pager buttons" aria-label={`Pages of ${label}`}>
      <button type="button" className="button" disabled={!pages.hasPrevious} onClick={pages.previous}>
        Previous page
      </button>
      <span aria-live="polite">Page {pages.pageNumber}</span>
      <button type="button" className="button" disabled={!pages.hasNext} onClick={pages.next}>
        Next page
      </button>
    </nav>
  );
}
