import { foldSearchFilter } from '@ars/auth';
import { decodeEventMessage, encodeToken, eventFilterSubject } from '@ars/bus';
import { SearchRequest } from '@ars/contracts';
import type { EventFrame, SearchHit } from '@ars/contracts';
import { TIME_MARGIN_MS, decodeCursor, encodeCursor, instant, scanForward } from '../events/event-scan.ts';
import { checkTypeNames, routeOf } from '../events/stream-filter.ts';
import type { EventRoute } from '../events/stream-filter.ts';
import type { EventRecord } from '../ports.ts';
import type { EventsContext } from './events.handlers.ts';
import type { LocalHandler } from './local-handler.ts';

/** First and largest span of sequences read per step of the backward scan. */
const FIRST_CHUNK = 1_024;
const MAX_CHUNK = 65_536;
/** Characters of context on each side of the first match in a snippet. */
const SNIPPET_CONTEXT = 60;

/** The folded search filter and the free text, as checked per event. */
interface Search {
  readonly subject: string;
  readonly tenants: ReadonlySet<string>;
  readonly users: ReadonlySet<string>;
  readonly sessions: ReadonlySet<string> | undefined;
  readonly types: ReadonlySet<string> | undefined;
  readonly since: number | undefined;
  readonly until: number | undefined;
  /** Lower-cased terms that must all occur in the type or the payload. */
  readonly terms: readonly string[];
}

function tokens(values: readonly string[]): Set<string> {
  return new Set(values.map(encodeToken));
}

function only<T>(values: readonly T[] | undefined): T | undefined {
  return values?.length === 1 ? values[0] : undefined;
}

function inScope(search: Search, route: EventRoute): boolean {
  return (
    search.tenants.has(route.tenantToken) &&
    search.users.has(route.userToken) &&
    (search.sessions === undefined || search.sessions.has(route.sessionToken)) &&
    (search.types === undefined || search.types.has(route.type))
  );
}

function hitOf(search: Search, record: EventRecord): SearchHit | undefined {
  const route = routeOf(record);
  if (route === undefined || !inScope(search, route)) return undefined;
  let frame: EventFrame;
  try {
    frame = decodeEventMessage(record);
  } catch {
    return undefined;
  }
  const at = Date.parse(frame.occurred_at);
  if ((search.since !== undefined && at < search.since) || (search.until !== undefined && at >= search.until)) {
    return undefined;
  }
  const base = {
    kind: 'event' as const,
    id: String(frame.sequence),
    tenant: frame.tenant,
    user: frame.user,
    session: frame.session,
    title: frame.type,
    occurred_at: frame.occurred_at,
    record: frame as unknown as Record<string, unknown>,
  };
  if (search.terms.length === 0) return base;
  const text = `${frame.type} ${JSON.stringify(frame.payload)}`;
  const lower = text.toLowerCase();
  let score = 0;
  for (const term of search.terms) {
    let index = lower.indexOf(term);
    if (index < 0) return undefined;
    for (; index >= 0; index = lower.indexOf(term, index + term.length)) score += 1;
  }
  const first = lower.indexOf(search.terms[0]!);
  const from = Math.max(0, first - SNIPPET_CONTEXT);
  const to = Math.min(text.length, first + search.terms[0]!.length + SNIPPET_CONTEXT);
  const snippet = `${from > 0 ? '…' : ''}${text.slice(from, to)}${to < text.length ? '…' : ''}`;
  return { ...base, snippet, score };
}

/**
 * search.events: the search folding rules (`tenant_ids`, `user_ids` fold
 * to the caller; more needs admin or console:fleet, already refused at the
 * edge), the filter's types and time window, and free text over the type
 * and the payload (every term, case-insensitive). Newest first: the stream
 * is read backwards in growing spans of sequences, within the scan budget.
 */
export function searchEventsHandler(context: EventsContext): LocalHandler {
  return async ({ method, identity, body }) => {
    const request = SearchRequest.parse(body);
    const filter = request.filter ?? {};
    const folded = foldSearchFilter({
      verified: identity,
      ...(filter.tenant_ids === undefined ? {} : { tenant_ids: filter.tenant_ids }),
      ...(filter.user_ids === undefined ? {} : { user_ids: filter.user_ids }),
      ...(filter.session_ids === undefined ? {} : { session_ids: filter.session_ids }),
    });
    if (filter.types !== undefined) checkTypeNames(filter.types, 'filter.types');
    const tenant = only(folded.tenant_ids);
    const single = tenant !== undefined && folded.user_ids.length === 1;
    const search: Search = {
      subject: eventFilterSubject({
        tenant,
        user: single ? folded.user_ids[0] : undefined,
        session: single ? only(folded.session_ids ?? []) : undefined,
        type: only(filter.types),
      }),
      tenants: tokens(folded.tenant_ids),
      users: tokens(folded.user_ids),
      sessions: folded.session_ids === undefined ? undefined : tokens(folded.session_ids),
      types: filter.types === undefined ? undefined : new Set(filter.types),
      since: instant(filter.since),
      until: instant(filter.until),
      terms: (request.query ?? '')
        .toLowerCase()
        .split(/\s+/)
        .filter((term) => term !== ''),
    };
    const bounds = await context.eventLog.bounds();
    let hi = request.cursor === undefined ? bounds.lastSeq : decodeCursor(method, request.cursor) - 1;
    let budget = context.scanLimit;
    let width = FIRST_CHUNK;
    const items: SearchHit[] = [];
    let next: number | undefined;
    while (hi >= bounds.firstSeq) {
      if (budget <= 0) {
        next = hi + 1;
        break;
      }
      const lo = Math.max(bounds.firstSeq, hi - Math.min(width, budget) + 1);
      const chunk: SearchHit[] = [];
      let oldest = Number.POSITIVE_INFINITY;
      const top = hi;
      const outcome = await scanForward(
        context.eventLog,
        { filterSubject: search.subject, startSequence: lo, budget: top - lo + 2 },
        (record) => {
          if (record.seq > top) return false;
          oldest = Math.min(oldest, record.storedAtMs);
          const hit = hitOf(search, record);
          if (hit !== undefined) chunk.push(hit);
          return true;
        },
      );
      budget -= Math.max(1, outcome.count);
      for (const hit of chunk.reverse()) {
        items.push(hit);
        if (items.length === request.limit) break;
      }
      if (items.length === request.limit) {
        const lastSeq = Number(items.at(-1)!.id);
        if (lastSeq > bounds.firstSeq) next = lastSeq;
        break;
      }
      if (search.since !== undefined && oldest < search.since - TIME_MARGIN_MS) break;
      hi = lo - 1;
      width = Math.min(width * 2, MAX_CHUNK);
    }
    return { items, ...(next === undefined ? {} : { next_cursor: encodeCursor(method, next) }) };
  };
}
