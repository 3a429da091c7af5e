import { InvalidCursorError, StoreError } from './errors.ts';
import type { Collection, Filter, Sort, StoreDocument } from './types.ts';
import { isPlainObject } from './validate.ts';

/** Page order on the sort field: `asc` (nulls first) or `desc` (nulls last), as MongoDB sorts. */
export type PageDirection = 'asc' | 'desc';

/** Options of {@link paginate} over items of type `T`. */
export interface PaginateOptions<T = unknown> {
  /**
   * The field pages are ordered by (dotted paths allowed), `_id` breaking
   * ties. It must hold strings or numbers (ISO 8601 strings for instants)
   * or null, one type per collection: comparisons never cross types.
   */
  sortField: string;
  direction: PageDirection;
  /** `next_cursor` of the previous page; absent for the first page. */
  after?: string | undefined;
  /** Page size: a positive integer (the caller bounds it). */
  limit: number;
  /** Also ends the page by size; absent: `limit` alone ends it. */
  budget?: PageBudget<T> | undefined;
  /**
   * Bounds what one page reads when `filter` narrows `scan.filter` with
   * conditions no index settles (free text, a status): the page looks only
   * at the next `scan.limit` documents of `scan.filter` in page order. When
   * those are used up before `limit` items matched, the page ends there,
   * with fewer items (none, when nothing matched) and a `next_cursor` after
   * the last document it looked at: every page's work is bounded, and a
   * walk that follows the cursors still misses nothing. `filter` must
   * select a subset of `scan.filter`.
   */
  scan?: PageScan<T> | undefined;
  /**
   * Every document `filter` selects holds a value of `sortField` (never
   * null or missing). The page then tells the store the whole span of sort
   * values it may read (from the cursor to the end of its scan window), so
   * an index on the field serves the page from the cursor on instead of
   * walking from the start of the set; without it, only the bounds nulls
   * cannot cross are given. @default false
   */
  sortValueAlways?: boolean | undefined;
}

/** See {@link PaginateOptions.scan}. */
export interface PageScan<T> {
  readonly filter: Filter<T>;
  /** A positive integer. */
  readonly limit: number;
}

/**
 * A size bound on a page, on top of its `limit`: items are taken in page
 * order while the sum of their `sizeOf` stays within `maxBytes`, and the page
 * ends before the first item that would take it over, with `next_cursor`
 * pointing at that item. The first item is always taken, whatever its size,
 * so that a page never comes back empty while items remain: a caller whose
 * single item may exceed `maxBytes` shrinks it in `sizeOf`'s view first.
 */
export interface PageBudget<T> {
  /** Most bytes the page's items may add up to. */
  readonly maxBytes: number;
  /** The bytes one item adds to the page (for example its JSON in UTF-8, as the reply will carry it). */
  readonly sizeOf: (item: T) => number;
}

/** One page and the cursor of the next one (null on the last page). */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

type CursorValue = string | number | null;

/** What a cursor holds: the sort it was made for, the last sort value, the last `_id`. */
interface Position {
  f: string;
  d: PageDirection;
  v: CursorValue;
  i: string;
}

const MAX_CURSOR_LENGTH = 4096;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function isCursorValue(value: unknown): value is CursorValue {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

function valueAt(document: Record<string, unknown>, path: string): unknown {
  let node: unknown = document;
  for (const part of path.split('.')) {
    if (!isPlainObject(node)) return undefined;
    node = node[part];
  }
  return node;
}

function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string, sortField: string, direction: PageDirection): Position {
  if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_LENGTH || !BASE64URL.test(cursor)) {
    throw new InvalidCursorError('not a cursor');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError('not a cursor');
  }
  if (!isPlainObject(parsed) || typeof parsed.i !== 'string' || parsed.i === '' || !isCursorValue(parsed.v)) {
    throw new InvalidCursorError('not a cursor');
  }
  if (parsed.f !== sortField || parsed.d !== direction) throw new InvalidCursorError('made for another order');
  return { f: sortField, d: direction, v: parsed.v, i: parsed.i };
}

/** Documents strictly after `position` in the page order. */
function afterClause(field: string, direction: PageDirection, position: Position): Record<string, unknown> {
  const { v: value, i: id } = position;
  if (field === '_id') return { _id: direction === 'asc' ? { $gt: id } : { $lt: id } };
  if (direction === 'asc') {
    if (value === null) return { $or: [{ [field]: null, _id: { $gt: id } }, { [field]: { $ne: null } }] };
    return { $or: [{ [field]: { $gt: value } }, { [field]: value, _id: { $gt: id } }] };
  }
  if (value === null) return { [field]: null, _id: { $lt: id } };
  return { $or: [{ [field]: { $lt: value } }, { [field]: value, _id: { $lt: id } }, { [field]: null }] };
}

/**
 * A plain range on the sort field holding every document after `after` and
 * up to `upTo` in the page order, for the store's planner to bound an index
 * walk with (the clauses proper are `$or`s, which it does not read). A
 * bound nulls could cross is given only when `valuesAlways`: nulls come
 * first ascending and last descending.
 */
function sortSpan(
  field: string,
  direction: PageDirection,
  after: Position | undefined,
  upTo: Position | undefined,
  valuesAlways: boolean,
): Record<string, unknown> | undefined {
  if (field === '_id') return undefined;
  const span: Record<string, CursorValue> = {};
  const [fromBound, toBound] = direction === 'asc' ? ['$gte', '$lte'] : ['$lte', '$gte'];
  const nullsAfter = direction === 'desc';
  if (after !== undefined && after.v !== null && (!nullsAfter || valuesAlways)) span[fromBound] = after.v;
  if (upTo !== undefined && upTo.v !== null && (nullsAfter || valuesAlways)) span[toBound] = upTo.v;
  return Object.keys(span).length === 0 ? undefined : { [field]: span };
}

/** Documents at or before `position` in the page order: what {@link afterClause} leaves out. */
function upToClause(field: string, direction: PageDirection, position: Position): Record<string, unknown> {
  const { v: value, i: id } = position;
  if (field === '_id') return { _id: direction === 'asc' ? { $lte: id } : { $gte: id } };
  if (direction === 'asc') {
    if (value === null) return { [field]: null, _id: { $lte: id } };
    return { $or: [{ [field]: null }, { [field]: { $lt: value } }, { [field]: value, _id: { $lte: id } }] };
  }
  if (value === null) return { $or: [{ [field]: { $ne: null } }, { [field]: null, _id: { $lte: id } }] };
  return { $or: [{ [field]: { $gt: value } }, { [field]: value, _id: { $gte: id } }] };
}

function positionOf(document: StoreDocument, field: string, direction: PageDirection): Position {
  const value = valueAt(document as unknown as Record<string, unknown>, field) ?? null;
  if (!isCursorValue(value)) throw new StoreError(`sort field ${field} holds a value a cursor cannot carry`);
  return { f: field, d: direction, v: value, i: document._id };
}

function sortOf(field: string, direction: PageDirection): Sort {
  const order = direction === 'asc' ? 1 : -1;
  return field === '_id' ? { _id: order } : { [field]: order, _id: order };
}

/**
 * The position of the `limit`-th document of `filter` after `position` in
 * the page order (`sortField`, then `_id`), or undefined when no more than
 * `limit` follow. Reads at most `limit + 1` documents, keeping only their place.
 */
async function windowEdge<T extends StoreDocument>(
  collection: Collection<T>,
  filter: Filter<T>,
  field: string,
  direction: PageDirection,
  limit: number,
  position: Position | undefined,
  valuesAlways: boolean,
): Promise<Position | undefined> {
  const span = sortSpan(field, direction, position, undefined, valuesAlways);
  const clauses: Filter<T>[] = [filter];
  if (span !== undefined) clauses.push(span as Filter<T>);
  if (position !== undefined) clauses.push(afterClause(field, direction, position) as Filter<T>);
  const query = clauses.length === 1 ? filter : ({ $and: clauses } as Filter<T>);
  const window = await collection.find(query, {
    sort: sortOf(field, direction),
    limit: limit + 1,
    projection: field === '_id' ? { _id: 1 } : { [field]: 1 },
  });
  const last = window[limit - 1];
  return window.length <= limit || last === undefined ? undefined : positionOf(last, field, direction);
}

/**
 * A filter clause keeping the first `limit` documents of `filter` in the
 * order `sortField`, then `_id` (and any other document no later than the
 * last of them), or undefined when `filter` selects no more than `limit`:
 * what bounds a count or a scan to the newest (or oldest) part of a large
 * set. Reads at most `limit + 1` documents.
 */
export async function firstOf<T extends StoreDocument>(
  collection: Collection<T>,
  filter: Filter<T>,
  options: { readonly sortField: string; readonly direction: PageDirection; readonly limit: number },
): Promise<Filter<T> | undefined> {
  if (!Number.isSafeInteger(options.limit) || options.limit < 1)
    throw new StoreError('limit must be a positive integer');
  const edge = await windowEdge(
    collection,
    filter,
    options.sortField,
    options.direction,
    options.limit,
    undefined,
    false,
  );
  if (edge === undefined) return undefined;
  const clause = upToClause(options.sortField, options.direction, edge);
  const span = sortSpan(options.sortField, options.direction, undefined, edge, false);
  return (span === undefined ? clause : { $and: [span, clause] }) as Filter<T>;
}

function checkOptions<T>(options: PaginateOptions<T>): void {
  if (typeof options.sortField !== 'string' || options.sortField === '')
    throw new StoreError('sortField must be a field name');
  if (options.direction !== 'asc' && options.direction !== 'desc')
    throw new StoreError('direction must be asc or desc');
  if (!Number.isSafeInteger(options.limit) || options.limit < 1)
    throw new StoreError('limit must be a positive integer');
  if (options.budget !== undefined && !(options.budget.maxBytes > 0))
    throw new StoreError('budget.maxBytes must be positive');
  if (options.scan !== undefined && !(Number.isSafeInteger(options.scan.limit) && options.scan.limit > 0))
    throw new StoreError('scan.limit must be a positive integer');
}

/** How many of `items` (at least one, when there is one) fit `budget`. */
function countWithin<T>(items: readonly T[], budget: PageBudget<T> | undefined): number {
  if (budget === undefined) return items.length;
  let total = 0;
  for (let index = 0; index < items.length; index += 1) {
    total += budget.sizeOf(items[index]!);
    if (total > budget.maxBytes) return Math.max(1, index);
  }
  return items.length;
}

/**
 * Keyset pagination: documents matching `filter`, ordered by
 * `sortField` then `_id`, `limit` at a time (and fewer when a `budget` ends
 * the page first). The cursor is base64url JSON of
 * the order, the last sort value and the last `_id`, so pages neither skip
 * nor repeat documents while others are inserted or deleted. Cursors are not
 * signed: the filter still applies, so a forged one reveals nothing more.
 * @throws InvalidCursorError when `after` is malformed or made for another order
 * @throws StoreError when the last item's sort value is not a string, number or null
 */
export async function paginate<T extends StoreDocument>(
  collection: Collection<T>,
  filter: Filter<T>,
  options: PaginateOptions<T>,
): Promise<Page<T>> {
  checkOptions(options);
  const { sortField: field, direction } = options;
  const position = options.after === undefined ? undefined : decodeCursor(options.after, field, direction);
  const { scan } = options;
  // The last document this page may look at, when the scan window ends before the set does.
  const edge =
    scan === undefined
      ? undefined
      : await windowEdge(
          collection,
          scan.filter,
          field,
          direction,
          scan.limit,
          position,
          options.sortValueAlways === true,
        );
  const clauses: Filter<T>[] = [filter];
  const span = sortSpan(field, direction, position, edge, options.sortValueAlways === true);
  if (span !== undefined) clauses.push(span as Filter<T>);
  if (position !== undefined) clauses.push(afterClause(field, direction, position) as Filter<T>);
  if (edge !== undefined) clauses.push(upToClause(field, direction, edge) as Filter<T>);
  const query = clauses.length === 1 ? filter : ({ $and: clauses } as Filter<T>);
  const found = await collection.find(query, { sort: sortOf(field, direction), limit: options.limit + 1 });
  const items = found.slice(0, countWithin(found.slice(0, options.limit), options.budget));
  const last = items.at(-1);
  if (found.length > items.length && last !== undefined) {
    return { items, next_cursor: encodeCursor(positionOf(last, field, direction)) };
  }
  // Every match of the window is on this page: the next one starts after the window.
  return { items, next_cursor: edge === undefined ? null : encodeCursor(edge) };
}
