import { EVENT_SUBJECT_PREFIX, encodeToken, eventFilterSubject } from '@ars/bus';
import { ServiceError } from '@ars/contracts';

/**
 * What a subscription or a read selects, in the subject's own terms: the
 * encoded identity tokens, so that routing a message never decodes base64.
 * One type (or none) becomes part of the JetStream subject filter; several
 * types are matched here, because nats-server 2.9 takes one filter subject
 * per consumer.
 */

/** The routing parts of an event record (its subject and run header), still encoded. */
export interface EventRoute {
  /** `<tenant>.<user>.<session>` tokens: the isolation key. */
  readonly key: string;
  readonly tenantToken: string;
  readonly userToken: string;
  readonly sessionToken: string;
  readonly runToken: string;
  /** The event type (its dots kept). */
  readonly type: string;
}

const PREFIX = `${EVENT_SUBJECT_PREFIX}.`;

/**
 * Splits `ars.ev.<t>.<u>.<s>.<type…>` without decoding and takes the run from
 * the record's run header; `undefined` for any other subject.
 */
export function routeOf(record: { readonly subject: string; readonly runToken: string }): EventRoute | undefined {
  const { subject } = record;
  if (!subject.startsWith(PREFIX)) return undefined;
  const start = PREFIX.length;
  const t = subject.indexOf('.', start);
  const u = t < 0 ? -1 : subject.indexOf('.', t + 1);
  const s = u < 0 ? -1 : subject.indexOf('.', u + 1);
  if (s < 0 || s === subject.length - 1) return undefined;
  return {
    key: subject.slice(start, s),
    tenantToken: subject.slice(start, t),
    userToken: subject.slice(t + 1, u),
    sessionToken: subject.slice(u + 1, s),
    runToken: record.runToken,
    type: subject.slice(s + 1),
  };
}

/** The isolation key of a triple, as {@link EventRoute.key} spells it. */
export function isolationKey(triple: { tenant: string; user: string; session: string }): string {
  return `${encodeToken(triple.tenant)}.${encodeToken(triple.user)}.${encodeToken(triple.session)}`;
}

/** A subscription's selection. */
export interface StreamFilter {
  /** The isolation key; `undefined` for a cross-tenant fan-in (`admin=1`). */
  readonly key: string | undefined;
  /** Only this run's events (encoded token). */
  readonly runToken: string | undefined;
  /** Only these types; `undefined` for every type. */
  readonly types: ReadonlySet<string> | undefined;
  /** The JetStream filter subject that reads a superset of what {@link matches} accepts. */
  readonly subject: string;
}

const EVENT_TYPE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** Refuses a type filter that is not an exact event type name (wildcards included): 400 `invalid_request`. */
export function checkTypeNames(types: readonly string[], where: string): void {
  for (const type of types) {
    if (!EVENT_TYPE.test(type)) {
      throw new ServiceError('invalid_request', `${where}: not an event type: ${JSON.stringify(type.slice(0, 64))}`);
    }
  }
}

/** Builds the filter of one subscription: its verified triple (or every triple), run and types. */
export function streamFilter(input: {
  readonly triple: { tenant: string; user: string; session: string } | undefined;
  readonly run?: string | undefined;
  readonly types?: readonly string[] | undefined;
}): StreamFilter {
  const types = input.types === undefined || input.types.length === 0 ? undefined : [...new Set(input.types)];
  if (types !== undefined) checkTypeNames(types, 'event type filter');
  const single = types?.length === 1 ? types[0] : undefined;
  return {
    key: input.triple === undefined ? undefined : isolationKey(input.triple),
    runToken: input.run === undefined ? undefined : encodeToken(input.run),
    types: types === undefined ? undefined : new Set(types),
    subject: eventFilterSubject({ ...input.triple, type: single }),
  };
}

/** True when the event routed as `route` belongs to the selection. */
export function matches(filter: StreamFilter, route: EventRoute): boolean {
  if (filter.key !== undefined && filter.key !== route.key) return false;
  if (filter.runToken !== undefined && filter.runToken !== route.runToken) return false;
  return filter.types === undefined || filter.types.has(route.type);
}
