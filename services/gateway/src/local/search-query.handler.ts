import { SEARCH_KINDS, SearchRequest, ServiceError, isServiceError } from '@ars/contracts';
import type { SearchHit, SearchKind, SearchResponse, VerifiedIdentity } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import type { RpcCaller } from '../ports.ts';
import type { LocalHandler } from './local-handler.ts';
import { cursorBinding, decodeSearchCursor, encodeSearchCursor } from './search-cursor.ts';
import type { SearchCursor, SourcePosition } from './search-cursor.ts';

/** What search.query needs. */
export interface SearchQueryContext {
  readonly rpc: RpcCaller;
  /** search.events, answered in this process. */
  readonly searchEvents: LocalHandler;
  /** How long each owner may take, in ms. */
  readonly timeoutMs: number;
  /** Wall clock in epoch ms (the cursor's as-of instant). */
  readonly clock: () => Date;
  readonly logger: Logger;
}

/** The owner of each kind. */
export const SEARCH_SOURCES: Readonly<Record<SearchKind, { service: string; method: string }>> = {
  task: { service: 'run-executor', method: 'search.tasks' },
  session: { service: 'session', method: 'search.sessions' },
  artifact: { service: 'artifact', method: 'search.artifacts' },
  event: { service: 'gateway', method: 'search.events' },
};

/** An owner page request is at most this long (the contract's page limit). */
const MAX_OWNER_LIMIT = 500;
/** Owner pages one reader may fetch for one search.query page; past it the page ends early. */
const MAX_FETCHES = 4;

type Page = { readonly items: readonly SearchHit[]; readonly next_cursor?: string };
type Fetch = (cursor: string | undefined, limit: number) => Promise<Page>;

interface SourceError {
  readonly kind: SearchKind;
  readonly code: string;
  readonly message: string;
}

/** One owner's list, read lazily, page by page, from a position. */
class SourceReader {
  readonly kind: SearchKind;
  readonly #start: SourcePosition;
  readonly #fetch: Fetch;
  readonly #limit: number;
  #page:
    { cursor: string | undefined; items: readonly SearchHit[]; next: string | undefined; index: number } | undefined;
  #fetches = 0;
  failure: SourceError | undefined;
  stalled = false;

  constructor(kind: SearchKind, start: SourcePosition, fetch: Fetch, limit: number) {
    this.kind = kind;
    this.#start = start;
    this.#fetch = fetch;
    this.#limit = limit;
  }

  /** The next hit, fetching the next owner page when needed; undefined when exhausted, failed or stalled. */
  async head(): Promise<SearchHit | undefined> {
    for (;;) {
      if (this.#start === 'done' || this.failure !== undefined || this.stalled) return undefined;
      const page = this.#page;
      if (page !== undefined && page.index < page.items.length) return page.items[page.index];
      if (page !== undefined && page.next === undefined) return undefined;
      if (this.#fetches >= MAX_FETCHES) {
        this.stalled = true;
        return undefined;
      }
      const cursor = page === undefined ? this.#start.cursor : page.next;
      const skip = page === undefined ? this.#start.skip : 0;
      this.#fetches += 1;
      try {
        const fetched = await this.#fetch(cursor, Math.min(MAX_OWNER_LIMIT, skip + this.#limit));
        this.#page = { cursor, items: fetched.items, next: fetched.next_cursor, index: skip };
      } catch (error) {
        this.failure = {
          kind: this.kind,
          code: isServiceError(error) ? error.code : 'internal',
          message: isServiceError(error) ? error.message : 'internal error',
        };
        return undefined;
      }
    }
  }

  /** Consumes the hit {@link head} answered. */
  take(): SearchHit {
    const page = this.#page!;
    const hit = page.items[page.index]!;
    page.index += 1;
    return hit;
  }

  /** Where the next search.query page starts in this owner's list. */
  position(): SourcePosition {
    const page = this.#page;
    if (this.#start === 'done') return 'done';
    if (page === undefined) return this.#start;
    if (page.index < page.items.length) {
      return page.cursor === undefined ? { skip: page.index } : { cursor: page.cursor, skip: page.index };
    }
    return page.next === undefined ? 'done' : { cursor: page.next, skip: 0 };
  }
}

const KIND_ORDER: Readonly<Record<string, number>> = Object.fromEntries(SEARCH_KINDS.map((kind, i) => [kind, i]));

function instantOf(hit: SearchHit): number {
  const at = Date.parse(hit.occurred_at);
  return Number.isNaN(at) ? Number.NEGATIVE_INFINITY : at;
}

/** Merge order: higher score first (absent counts 0), then newer, then kind, then id. */
export function compareHits(a: SearchHit, b: SearchHit): number {
  return (
    (b.score ?? 0) - (a.score ?? 0) ||
    instantOf(b) - instantOf(a) ||
    (KIND_ORDER[a.kind] ?? 0) - (KIND_ORDER[b.kind] ?? 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** `until` pinned to the first page's instant, or the caller's when earlier. */
function pinnedUntil(until: string | undefined, asOf: number): string {
  if (until !== undefined && Date.parse(until) <= asOf) return until;
  return new Date(asOf).toISOString();
}

/** Merges the readers' lists by {@link compareHits} of their next hits, up to `limit`. */
async function merge(readers: readonly SourceReader[], limit: number): Promise<SearchHit[]> {
  const items: SearchHit[] = [];
  while (items.length < limit) {
    const heads = await Promise.all(readers.map((reader) => reader.head()));
    // An owner whose next hit is unknown (fetch budget spent) ends the page: merging past it would misorder.
    if (readers.some((reader) => reader.stalled)) break;
    let best = -1;
    heads.forEach((hit, index) => {
      if (hit !== undefined && (best < 0 || compareHits(hit, heads[best]!) < 0)) best = index;
    });
    if (best < 0) break;
    items.push(readers[best]!.take());
  }
  return items;
}

/**
 * search.query: the same search (caller identity, query, filter) asked of
 * every owner in parallel — search.tasks (run-executor), search.sessions
 * (session), search.artifacts (artifact) and search.events (here) — or of
 * the owners `filter.kinds` names. The owners' lists (each newest first) are
 * merged by comparing their next hits: higher score first, then newer. Pages
 * follow the merged list with a cursor (see `search-cursor.ts`). An owner
 * that fails or does not answer in time degrades the answer (`partial`,
 * `failed_kinds`, `source_errors`) instead of failing it; its position is
 * kept, so a later page asks it again from where it stood.
 */
export function searchQueryHandler(context: SearchQueryContext): LocalHandler {
  return async ({ identity, body }) => {
    const request = SearchRequest.parse(body);
    const { kinds, ...filter } = request.filter ?? {};
    const binding = cursorBinding(request.query, request.filter);
    const asked = new Set<SearchKind>(kinds ?? SEARCH_KINDS);
    const cursor: SearchCursor =
      request.cursor === undefined
        ? {
            asOf: context.clock().getTime(),
            positions: Object.fromEntries(
              SEARCH_KINDS.map((kind) => [kind, asked.has(kind) ? { skip: 0 } : 'done']),
            ) as SearchCursor['positions'],
          }
        : decodeSearchCursor(binding, request.cursor);
    const ownerFilter = { ...filter, until: pinnedUntil(filter.until, cursor.asOf) };
    const bodyIdentity = request.identity;
    const fetchOf =
      (kind: SearchKind): Fetch =>
      async (ownerCursor, limit) => {
        const ownerBody = {
          identity: bodyIdentity,
          ...(request.query === undefined ? {} : { query: request.query }),
          filter: ownerFilter,
          limit,
          ...(ownerCursor === undefined ? {} : { cursor: ownerCursor }),
        };
        const page = (await ask(context, kind, identity, ownerBody)) as Partial<Page> | null;
        if (!Array.isArray(page?.items))
          throw new ServiceError('internal', `${SEARCH_SOURCES[kind].method} answered no items`);
        return page as Page;
      };
    const readers = SEARCH_KINDS.map(
      (kind) => new SourceReader(kind, cursor.positions[kind], fetchOf(kind), request.limit),
    );
    const items = await merge(readers, request.limit);
    const failures = readers.flatMap((reader) => (reader.failure === undefined ? [] : [reader.failure]));
    for (const failure of failures) {
      context.logger.warn({ kind: failure.kind, code: failure.code }, 'search.query: an owner did not answer');
    }
    const positions = Object.fromEntries(
      readers.map((reader) => [reader.kind, reader.position()]),
    ) as SearchCursor['positions'];
    const open = readers.filter((reader) => positions[reader.kind] !== 'done');
    // Nothing found and only failed owners left: end here rather than page through empty answers forever.
    const more = open.length > 0 && !(items.length === 0 && open.every((reader) => reader.failure !== undefined));
    const response: Omit<SearchResponse, 'protocol_version'> & { source_errors?: SourceError[] } = {
      items,
      ...(more ? { next_cursor: encodeSearchCursor(binding, { asOf: cursor.asOf, positions }) } : {}),
      ...(failures.length === 0
        ? {}
        : { partial: true, failed_kinds: failures.map((failure) => failure.kind), source_errors: failures }),
    };
    return response;
  };
}

function ask(
  context: SearchQueryContext,
  kind: SearchKind,
  identity: VerifiedIdentity,
  body: unknown,
): Promise<unknown> {
  const source = SEARCH_SOURCES[kind];
  if (source.service === 'gateway') return context.searchEvents({ method: source.method, identity, body });
  return context.rpc.call(source.service, source.method, identity, body, { timeoutMs: context.timeoutMs });
}
