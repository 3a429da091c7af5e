import { foldIsolationFilter } from '@ars/auth';
import { decodeEventMessage, encodeToken, eventFilterSubject } from '@ars/bus';
import { EventAggregateRequest, EventsListRequest, ServiceError } from '@ars/contracts';
import type { EventFrame, EventsFilter, VerifiedIdentity } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import { TIME_MARGIN_MS, decodeCursor, encodeCursor, instant, scanForward } from '../events/event-scan.ts';
import { checkTypeNames, routeOf } from '../events/stream-filter.ts';
import { ADMIN_SCOPE_USED, adminScopeUsedPayload } from '../http/audit.ts';
import type { EventLog, EventRecord, EventSink } from '../ports.ts';
import type { LocalHandler } from './local-handler.ts';

/** What the event reads need. */
export interface EventsContext {
  readonly eventLog: EventLog;
  readonly events: EventSink;
  readonly logger: Logger;
  /** Most stored events one call reads. */
  readonly scanLimit: number;
  /** Wall clock (the default end of an aggregate window). */
  readonly clock: () => Date;
}

/** Most buckets one events.aggregate answer holds. */
export const MAX_BUCKETS = 10_000;
/** Default window of events.aggregate: the last 24 hours. */
const DEFAULT_WINDOW_MS = 24 * 60 * 60_000;

/** A filter folded by the Authentication rules, as subject filter plus what is checked per event. */
interface FoldedRead {
  readonly subject: string;
  /** Only this run's events (its encoded token, matched against the record's run header). */
  readonly runToken: string | undefined;
  readonly types: ReadonlySet<string> | undefined;
  readonly since: number | undefined;
  readonly until: number | undefined;
}

/**
 * The folding rules of the events.list filter: `user` omitted folds to the
 * caller (to the whole tenant with admin or console:fleet); another user
 * without the claim is 403 `identity_scope_required`; another tenant without
 * it 403 `scope_mismatch`; `session` only narrows. A granted crossing
 * publishes audit.admin_scope_used (shape 2).
 */
async function foldFilter(
  context: EventsContext,
  method: string,
  verified: VerifiedIdentity,
  filter: EventsFilter,
): Promise<FoldedRead> {
  const scope = foldIsolationFilter({
    verified,
    ...(filter.tenant === undefined ? {} : { tenant: filter.tenant }),
    ...(filter.user === undefined ? {} : { user: filter.user }),
    ...(filter.session === undefined ? {} : { session: filter.session }),
  });
  const types = filter.types === undefined ? undefined : [...new Set(filter.types)];
  if (types !== undefined) checkTypeNames(types, 'filter.types');
  const since = instant(filter.since);
  const until = instant(filter.until);
  if (since !== undefined && until !== undefined && since >= until) {
    throw new ServiceError('invalid_request', 'filter.since must be before filter.until');
  }
  if (scope.crossed) await auditCrossing(context, method, verified, scope);
  return {
    subject: eventFilterSubject({
      tenant: scope.tenant,
      user: scope.user,
      session: scope.session,
      type: types?.length === 1 ? types[0] : undefined,
    }),
    runToken: filter.run === undefined ? undefined : encodeToken(filter.run),
    types: types !== undefined && types.length > 1 ? new Set(types) : undefined,
    since,
    until,
  };
}

async function auditCrossing(
  context: EventsContext,
  method: string,
  verified: VerifiedIdentity,
  scope: { tenant: string; user: string | undefined; session: string | undefined },
): Promise<void> {
  const axes = [
    ...(scope.tenant === verified.tenant ? [] : ['filter.tenant']),
    ...(scope.user === verified.user ? [] : ['filter.user']),
  ];
  const claim = verified.scopes.includes('admin') ? 'admin' : 'console:fleet';
  try {
    await context.events.publish({
      type: ADMIN_SCOPE_USED,
      identity: { tenant: verified.tenant, user: verified.user, session: verified.session, run: '' },
      payload: adminScopeUsedPayload({
        method: { name: method },
        verified,
        run: undefined,
        impersonating: { tenant: scope.tenant, user: scope.user ?? '', session: scope.session ?? '' },
        reason: `${axes.join(', ')} crossed under ${claim}`,
      }),
    });
  } catch (error) {
    context.logger.error({ err: error, method }, 'audit event could not be published');
  }
}

/** The frame of a record inside the read's types and time window, else `undefined`. */
function selected(read: FoldedRead, record: EventRecord): EventFrame | undefined {
  if (read.runToken !== undefined && read.runToken !== record.runToken) return undefined;
  if (read.types !== undefined && !read.types.has(routeOf(record)?.type ?? '')) return undefined;
  let frame: EventFrame;
  try {
    frame = decodeEventMessage(record);
  } catch {
    return undefined;
  }
  const at = Date.parse(frame.occurred_at);
  if (read.since !== undefined && at < read.since) return undefined;
  if (read.until !== undefined && at >= read.until) return undefined;
  return frame;
}

function pastWindow(read: FoldedRead, record: EventRecord): boolean {
  return read.until !== undefined && record.storedAtMs > read.until + TIME_MARGIN_MS;
}

function startOf(read: FoldedRead, after: number | undefined) {
  if (after !== undefined) return { startSequence: after + 1 };
  if (read.since !== undefined) return { startTime: new Date(read.since - TIME_MARGIN_MS) };
  return {};
}

/**
 * events.list: stored events oldest first. Pages by an opaque cursor (or
 * `after_sequence`); a page may hold fewer than `limit` items when the scan
 * budget ran out first, in which case `next_cursor` continues the scan.
 */
export function eventsListHandler(context: EventsContext): LocalHandler {
  return async ({ method, identity, body }) => {
    const request = EventsListRequest.parse(body);
    const read = await foldFilter(context, method, identity, request.filter ?? {});
    const after = request.cursor === undefined ? request.after_sequence : decodeCursor(method, request.cursor);
    const bounds = context.eventLog.bounds();
    const items: EventFrame[] = [];
    let past = false;
    const outcome = await scanForward(
      context.eventLog,
      { filterSubject: read.subject, budget: context.scanLimit, ...startOf(read, after) },
      (record) => {
        if (pastWindow(read, record)) {
          past = true;
          return false;
        }
        const frame = selected(read, record);
        if (frame !== undefined) items.push(frame);
        return items.length < request.limit;
      },
    );
    const more =
      outcome.last !== undefined &&
      !past &&
      (outcome.end === 'budget' || (outcome.end === 'stopped' && outcome.more));
    return {
      items,
      ...(more ? { next_cursor: encodeCursor(method, outcome.last!.seq) } : {}),
      last_sequence: (await bounds).lastSeq,
    };
  };
}

interface Bucket {
  count: number;
  by_type: Record<string, number>;
}

function increment(counts: Record<string, number>, type: string): void {
  counts[type] = (counts[type] ?? 0) + 1;
}

/**
 * events.aggregate: counts by type and by time bucket over the window
 * (default the last 24 hours). Buckets are aligned to multiples of
 * `bucket_seconds` since the Unix epoch, empty ones included; `truncated`
 * says the scan budget ended the count early.
 */
export function eventsAggregateHandler(context: EventsContext): LocalHandler {
  return async ({ method, identity, body }) => {
    const request = EventAggregateRequest.parse(body);
    const filter = request.filter ?? {};
    const until = instant(filter.until) ?? context.clock().getTime();
    const since = instant(filter.since) ?? until - DEFAULT_WINDOW_MS;
    const read = await foldFilter(context, method, identity, { ...filter });
    if (since >= until) throw new ServiceError('invalid_request', 'the window must end after it starts');
    const width = request.bucket_seconds * 1000;
    const first = Math.floor(since / width) * width;
    const count = Math.ceil((until - first) / width);
    if (count > MAX_BUCKETS) {
      throw new ServiceError(
        'invalid_request',
        `the window holds ${count} buckets of ${request.bucket_seconds} s; at most ${MAX_BUCKETS}`,
      );
    }
    const buckets: Bucket[] = Array.from({ length: count }, () => ({ count: 0, by_type: {} }));
    const byType: Record<string, number> = {};
    let total = 0;
    const window = { ...read, since, until };
    const outcome = await scanForward(
      context.eventLog,
      { filterSubject: read.subject, budget: context.scanLimit, startTime: new Date(since - TIME_MARGIN_MS) },
      (record) => {
        if (pastWindow(window, record)) return false;
        const frame = selected(window, record);
        if (frame === undefined) return true;
        const bucket = buckets[Math.floor((Date.parse(frame.occurred_at) - first) / width)];
        if (bucket === undefined) return true;
        bucket.count += 1;
        increment(bucket.by_type, frame.type);
        increment(byType, frame.type);
        total += 1;
        return true;
      },
    );
    return {
      since: new Date(since).toISOString(),
      until: new Date(until).toISOString(),
      bucket_seconds: request.bucket_seconds,
      total,
      by_type: byType,
      buckets: buckets.map((bucket, index) => ({ start: new Date(first + index * width).toISOString(), ...bucket })),
      ...(outcome.end === 'budget' ? { truncated: true } : {}),
    };
  };
}

/** events.subscribe streams over HTTP only; on the bus it answers with where to find it. */
export function eventsSubscribeHandler(): LocalHandler {
  return async () => {
    throw new ServiceError('invalid_request', 'events.subscribe is a server-sent event stream: GET /v1/events');
  };
}
