import { EVENTS_SUBSCRIBE_INPUTS, ServiceError } from '@ars/contracts';

/**
 * events.subscribe has no body: its inputs are `X-Service-Run`,
 * `X-Service-Event-Type` (one type or a comma-separated list, whitespace
 * around items ignored), `Last-Event-ID` and the query `admin=1`. They are
 * gathered into an `EventsSubscribeRequest` object and validated like a body.
 */

type Headers = Readonly<Record<string, string | string[] | undefined>>;

const RUN_HEADER = EVENTS_SUBSCRIBE_INPUTS.runHeader.toLowerCase();
const TYPE_HEADER = EVENTS_SUBSCRIBE_INPUTS.typeHeader.toLowerCase();
const CURSOR_HEADER = EVENTS_SUBSCRIBE_INPUTS.lastEventIdHeader.toLowerCase();

function single(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value.join(',') : value;
  const trimmed = first?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function parseCursor(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const cursor = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(cursor)) {
    throw new ServiceError(
      'invalid_request',
      `${EVENTS_SUBSCRIBE_INPUTS.lastEventIdHeader} must be an event sequence (a non-negative integer)`,
    );
  }
  return cursor;
}

function parseAdmin(query: unknown): boolean | undefined {
  const raw = query !== null && typeof query === 'object' ? (query as Record<string, unknown>).admin : undefined;
  const value = Array.isArray(raw) ? raw.at(-1) : raw;
  if (value === undefined) return undefined;
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false' || value === '') return false;
  throw new ServiceError('invalid_request', 'admin must be 1 (cross-tenant fan-in) or 0');
}

/** Builds the `EventsSubscribeRequest` object of one `GET /v1/events` from its headers and query. */
export function subscribeRequestBody(headers: Headers, query: unknown): Record<string, unknown> {
  const run = single(headers[RUN_HEADER]);
  const typeList = single(headers[TYPE_HEADER]);
  const types = typeList
    ?.split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const admin = parseAdmin(query);
  const cursor = parseCursor(single(headers[CURSOR_HEADER]));
  return {
    identity: {},
    ...(run === undefined ? {} : { run }),
    ...(types === undefined || types.length === 0 ? {} : { types: [...new Set(types)] }),
    ...(admin === undefined ? {} : { admin }),
    ...(cursor === undefined ? {} : { last_event_id: cursor }),
  };
}
