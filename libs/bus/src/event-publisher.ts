import { randomUUID } from 'node:crypto';
import { getEvent, isServiceError, ServiceError } from '@ars/contracts';
import type { EventDef } from '@ars/contracts';
import { injectTraceContext, SpanKind, withSpan } from '@ars/telemetry';
import type { Logger } from '@ars/telemetry';
import type { Bus } from './connection.ts';
import { encodeStoredEvent, traceIdOf } from './event-codec.ts';
import type { StoredEvent } from './event-codec.ts';
import { redactPayload, scrubString } from './redactor.ts';
import { publishTimer } from './publish-metrics.ts';
import { publishToStream } from './stream-publish.ts';
import { encodeToken, EVENT_RUN_HEADER, eventSubject } from './subjects.ts';
import { outgoingHeaders } from './outgoing-headers.ts';

/** Looks up a registry row by event type (`getEvent` of @ars/contracts by default). */
export type EventLookup = (type: string) => EventRow | undefined;

/** The members of a registry row the publisher uses. */
export type EventRow = Pick<EventDef, 'type' | 'class' | 'payload'>;

/** The event type published instead of a redacted event whose redaction failed. */
export const REDACTION_FAILED_TYPE = 'audit.redaction_failed';
/** Header naming the publishing service (for operators; not part of the frame). */
export const SOURCE_HEADER = 'ars-source';

/** Options of {@link createEventPublisher}. */
export interface EventPublisherOptions {
  /** The publishing service, sent as header `ars-source` and logged. */
  readonly source: string;
  readonly logger: Logger;
  /** @default `getEvent` of @ars/contracts; tests pass a small fake. */
  readonly registry?: EventLookup;
}

/** One event to publish. */
export interface PublishEventInput {
  readonly type: string;
  readonly identity: {
    readonly tenant: string;
    readonly user: string;
    readonly session: string;
    readonly run?: string | undefined;
  };
  readonly payload: unknown;
  /**
   * Event id, and then also its `Nats-Msg-Id`: reuse it on a retry so the
   * stream drops the copy. @default a random UUID, published without
   * `Nats-Msg-Id` (nothing can publish it again, and each id costs
   * nats-server a map entry for the duplicate window)
   */
  readonly eventId?: string;
  /** @default now */
  readonly occurredAt?: Date | string;
}

export interface PublishResult {
  /** The EVENTS stream sequence: the frame's `sequence`. */
  readonly sequence: number;
  /** True when the stream had already stored this event id within the duplicate window. */
  readonly duplicate: boolean;
}

export interface EventPublisher {
  /**
   * Validates the payload against the registry, redacts `redacted`-class
   * payloads and stores the event on the EVENTS stream. An unknown type or an
   * invalid payload is a programming error: ServiceError `internal`, logged.
   */
  publish(input: PublishEventInput): Promise<PublishResult>;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Creates the publisher every service uses to emit events. */
export function createEventPublisher(bus: Bus, options: EventPublisherOptions): EventPublisher {
  const { logger, source } = options;
  const lookup = options.registry ?? getEvent;
  const timer = publishTimer(source);

  function programmingError(type: string, message: string, fields: Record<string, unknown> = {}): ServiceError {
    logger.error({ eventType: type, source, ...fields }, 'event rejected before publish');
    return new ServiceError('internal', message);
  }

  function validated(type: string, payload: unknown): { def: EventRow; data: unknown } {
    const def = lookup(type);
    if (def === undefined) throw programmingError(type, `unknown event type ${type}`);
    const parsed = def.payload.safeParse(payload);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
      throw programmingError(type, `invalid payload for event ${type}`, { issues });
    }
    return { def, data: parsed.data };
  }

  /** The delivered payload and type; a failed redaction becomes audit.redaction_failed. */
  function delivered(type: string, def: EventRow, data: unknown): { type: string; payload: Record<string, unknown> } {
    if (def.class !== 'redacted') {
      if (typeof data !== 'object' || data === null || Array.isArray(data)) {
        throw programmingError(type, `payload of event ${type} is not an object`);
      }
      return { type, payload: data as Record<string, unknown> };
    }
    try {
      return { type, payload: redactPayload(def.payload, data) };
    } catch (error) {
      const reason = scrubString(errorText(error));
      logger.error({ eventType: type, source, reason }, 'redaction failed; publishing audit.redaction_failed instead');
      return { type: REDACTION_FAILED_TYPE, payload: { OriginalType: type, Reason: reason } };
    }
  }

  async function store(event: StoredEvent, deduplicate: boolean): Promise<PublishResult> {
    const subject = eventSubject(event);
    const h = outgoingHeaders();
    h.set(SOURCE_HEADER, source);
    if (event.run !== '') h.set(EVENT_RUN_HEADER, encodeToken(event.run));
    let traceId: string | undefined;
    injectTraceContext((key, value) => {
      h.set(key, value);
      if (key === 'traceparent') traceId = traceIdOf(value);
    });
    const body = traceId === undefined ? event : { ...event, trace_id: traceId };
    const started = performance.now();
    try {
      const ack = await publishToStream(bus.nc, subject, encodeStoredEvent(body), {
        ...(deduplicate ? { msgId: event.id } : {}),
        headers: h,
      });
      timer.ok.record((performance.now() - started) / 1000);
      return { sequence: ack.seq, duplicate: ack.duplicate };
    } catch (error) {
      timer.failed.record((performance.now() - started) / 1000);
      logger.warn({ err: error, eventType: event.type, eventId: event.id }, 'event publish failed');
      throw new ServiceError('unavailable', 'the event stream did not acknowledge the event', { cause: error });
    }
  }

  return {
    async publish(input: PublishEventInput): Promise<PublishResult> {
      return withSpan(
        `publish ${input.type}`,
        {
          kind: SpanKind.PRODUCER,
          service: source,
          attributes: { 'messaging.system': 'nats', 'ars.event_type': input.type },
        },
        async () => {
          const { def, data } = validated(input.type, input.payload);
          const out = delivered(input.type, def, data);
          const occurredAt = input.occurredAt ?? new Date();
          const event: StoredEvent = {
            id: input.eventId ?? randomUUID(),
            type: out.type,
            occurred_at: typeof occurredAt === 'string' ? occurredAt : occurredAt.toISOString(),
            tenant: input.identity.tenant,
            user: input.identity.user,
            session: input.identity.session,
            run: input.identity.run ?? '',
            payload: out.payload,
          };
          try {
            return await store(event, input.eventId !== undefined);
          } catch (error) {
            throw isServiceError(error)
              ? error
              : new ServiceError('internal', 'event publish failed', { cause: error });
          }
        },
      );
    },
  };
}
