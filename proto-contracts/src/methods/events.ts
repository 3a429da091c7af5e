import { z } from 'zod';
import { EventFrame } from '../event-def.ts';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import { Id, Timestamp, pageOf, pageRequest, record, requestOf } from '../schemas/common.ts';
import { EventBucket, EventsFilter } from '../schemas/event.ts';
import { onFamily } from './routing.ts';

/** The route of events.subscribe: `GET /v1/events`, answered with `text/event-stream`. */
export const EVENTS_SUBSCRIBE_ROUTE = '/v1/events';

/** HTTP inputs of events.subscribe (it has no body). */
export const EVENTS_SUBSCRIBE_INPUTS = {
  runHeader: 'X-Service-Run',
  typeHeader: 'X-Service-Event-Type',
  adminQuery: 'admin',
  lastEventIdHeader: 'Last-Event-ID',
} as const;

/**
 * events.subscribe has no body: the gateway builds this object from the
 * headers and the query (`X-Service-Run` → run; `X-Service-Event-Type`, one
 * type or a comma-separated list → types; `admin=1` → admin;
 * `Last-Event-ID` → last_event_id) and validates it like any request.
 */
export const EventsSubscribeRequest = requestOf({
  run: Id.optional().describe('X-Service-Run: only events of this run'),
  types: z.array(z.string().min(1)).min(1).max(146).optional().describe('X-Service-Event-Type, split on commas'),
  admin: z.boolean().optional().describe('admin=1: cross-tenant fan-in (admin or console:fleet)'),
  last_event_id: z.int().nonnegative().optional().describe('Last-Event-ID: resume strictly after this sequence'),
});
export type EventsSubscribeRequest = z.infer<typeof EventsSubscribeRequest>;

/** events.list: stored events, oldest first, with the folding rules on `filter`. */
export const EventsListRequest = requestOf({
  filter: EventsFilter.optional(),
  after_sequence: z.int().nonnegative().optional().describe('start strictly after this sequence'),
  ...pageRequest,
});
export type EventsListRequest = z.infer<typeof EventsListRequest>;

/** A page of event frames. */
export const EventsListResponse = record({
  ...pageOf(EventFrame),
  last_sequence: z.int().nonnegative().describe('the stream sequence of the newest event when read'),
});
export type EventsListResponse = z.infer<typeof EventsListResponse>;

/** Bucket widths of events.aggregate: one second to 31 days; default one hour. */
export const EVENT_BUCKET_SECONDS = { default: 3600, min: 1, max: 31 * 86_400 } as const;

/** events.aggregate: counts by type and by time bucket over the filter's window (default: the last 24 hours). */
export const EventAggregateRequest = requestOf({
  filter: EventsFilter.optional(),
  bucket_seconds: z
    .int()
    .min(EVENT_BUCKET_SECONDS.min)
    .max(EVENT_BUCKET_SECONDS.max)
    .default(EVENT_BUCKET_SECONDS.default)
    .describe('width of a time bucket in seconds'),
});
export type EventAggregateRequest = z.infer<typeof EventAggregateRequest>;

/** Counts over the window: total, by type, and per time bucket (empty buckets included). */
export const EventAggregateResponse = record({
  since: Timestamp,
  until: Timestamp,
  bucket_seconds: z.int().positive(),
  total: z.int().nonnegative(),
  by_type: z.record(z.string(), z.int().nonnegative()),
  buckets: z.array(EventBucket),
});
export type EventAggregateResponse = z.infer<typeof EventAggregateResponse>;

/** Event methods (gateway). */
export const EVENT_METHODS: readonly MethodDef[] = [
  defineMethod({
    name: 'events.subscribe',
    family: 'events',
    httpMethod: 'GET',
    routes: [EVENTS_SUBSCRIBE_ROUTE],
    surface: 'family',
    service: 'gateway',
    auth: ['R', 'X'],
    requestName: 'EventsSubscribeRequest',
    responseName: 'EventFrame',
    request: EventsSubscribeRequest,
    response: EventFrame,
    summary: 'Subscribe to the live event stream (SSE); resume with Last-Event-ID.',
  }),
  defineMethod({
    name: 'events.aggregate',
    family: 'events',
    ...onFamily('events.aggregate'),
    service: 'gateway',
    auth: ['R', 'X'],
    requestName: 'EventAggregateRequest',
    responseName: 'EventAggregateResponse',
    request: EventAggregateRequest,
    response: EventAggregateResponse,
    summary: 'Count events by type and by time bucket over a window.',
  }),
  defineMethod({
    name: 'events.list',
    family: 'events',
    ...onFamily('events.list'),
    service: 'gateway',
    auth: ['R', 'X'],
    requestName: 'EventsListRequest',
    responseName: 'EventsListResponse',
    request: EventsListRequest,
    response: EventsListResponse,
    summary: 'List stored events with filters and cursor pagination.',
  }),
];
