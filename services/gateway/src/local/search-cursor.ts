import { createHash } from 'node:crypto';
import { SEARCH_KINDS, ServiceError } from '@ars/contracts';
import type { SearchKind } from '@ars/contracts';

/**
 * The cursor of search.query: where the merged list stands in every owner's
 * own list, plus the instant the first page was read at. Opaque to clients;
 * its text is
 *
 *   `q1.<binding>.<as-of>.<task>.<session>.<artifact>.<event>`
 *
 * - `binding`: 12 hex digits of SHA-256 over the query and the filter, so a
 *   cursor is refused (400) with another query;
 * - `as-of`: epoch ms in base 36; every page asks the owners for records
 *   before it (`filter.until`), so records created while paging never shift
 *   the list;
 * - one position per kind: `-` (that owner's list is exhausted, or the kind
 *   was not asked), `<skip>` (from the owner's first hit, skipping `skip`
 *   hits, base 36), or `<skip>~<owner cursor>` (from that owner cursor). An
 *   owner cursor outside the base64url alphabet is written `*<base64url>`.
 *
 * Unsigned: the owners validate their own cursors and still apply the
 * caller's folded filter, so an edited cursor can skip or repeat, never widen.
 */

/** Where one owner's list stands. */
export type SourcePosition = { readonly cursor?: string; readonly skip: number } | 'done';

/** A decoded search.query cursor. */
export interface SearchCursor {
  readonly asOf: number;
  readonly positions: Readonly<Record<SearchKind, SourcePosition>>;
}

const VERSION = 'q1';
const MAX_CURSOR_LENGTH = 1024;
const SAFE = /^[A-Za-z0-9_-]+$/;

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, item]) => [key, canonical(item)]));
}

/** Binds a cursor to the query and filter it pages through. */
export function cursorBinding(query: string | undefined, filter: unknown): string {
  const text = JSON.stringify(canonical({ query: query ?? null, filter: filter ?? null }));
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

function encodePosition(position: SourcePosition): string {
  if (position === 'done') return '-';
  const skip = position.skip.toString(36);
  if (position.cursor === undefined) return skip;
  const cursor = SAFE.test(position.cursor)
    ? position.cursor
    : `*${Buffer.from(position.cursor, 'utf8').toString('base64url')}`;
  return `${skip}~${cursor}`;
}

function invalid(): ServiceError {
  return new ServiceError('invalid_request', 'cursor is not a next_cursor of search.query for this query and filter');
}

function decodePosition(text: string): SourcePosition {
  if (text === '-') return 'done';
  const [skipText, cursorText, extra] = text.split('~');
  if (skipText === undefined || extra !== undefined || !/^[0-9a-z]{1,4}$/.test(skipText)) throw invalid();
  const skip = Number.parseInt(skipText, 36);
  if (cursorText === undefined) return { skip };
  if (cursorText.startsWith('*')) {
    const raw = cursorText.slice(1);
    if (!SAFE.test(raw)) throw invalid();
    return { skip, cursor: Buffer.from(raw, 'base64url').toString('utf8') };
  }
  if (!SAFE.test(cursorText)) throw invalid();
  return { skip, cursor: cursorText };
}

/** The text of a cursor; `internal` if the owners' cursors make it longer than a cursor may be. */
export function encodeSearchCursor(binding: string, cursor: SearchCursor): string {
  const parts = SEARCH_KINDS.map((kind) => encodePosition(cursor.positions[kind]));
  const text = [VERSION, binding, cursor.asOf.toString(36), ...parts].join('.');
  if (text.length > MAX_CURSOR_LENGTH) {
    throw new ServiceError(
      'internal',
      `search.query cursor would be ${text.length} characters (at most ${MAX_CURSOR_LENGTH})`,
    );
  }
  return text;
}

/** Reads a cursor made by {@link encodeSearchCursor} for the same binding; anything else is 400 `invalid_request`. */
export function decodeSearchCursor(binding: string, text: string): SearchCursor {
  const parts = text.split('.');
  if (parts.length !== 3 + SEARCH_KINDS.length || parts[0] !== VERSION || parts[1] !== binding) throw invalid();
  const asOf = Number.parseInt(parts[2] ?? '', 36);
  if (!Number.isSafeInteger(asOf) || asOf <= 0) throw invalid();
  const positions = Object.fromEntries(
    SEARCH_KINDS.map((kind, index) => [kind, decodePosition(parts[3 + index] ?? '')]),
  ) as Record<SearchKind, SourcePosition>;
  return { asOf, positions };
}
