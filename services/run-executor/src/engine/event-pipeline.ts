import { randomUUID } from 'node:crypto';
import { getEvent, ServiceError } from '@ars/contracts';
import {
  encodeStoredEvent,
  encodeToken,
  EVENT_RUN_HEADER,
  eventSubject,
  MESSAGE_ID_HEADER,
  outgoingHeaders,
  publishTimer,
  publishToStream,
  redactPayload,
  REDACTION_FAILED_TYPE,
  SOURCE_HEADER,
  StreamPublishError,
  traceIdOf,
} from '@ars/bus';
import type { Bus, MsgHdrs, StoredEvent } from '@ars/bus';
import { injectTraceContext } from '@ars/telemetry';
import type { Logger } from '@ars/telemetry';

/**
 * JetStream publishing for the engine's hot path (its events): each
 * message goes out at once on the bus connection's shared reply inbox
 * (`publishToStream`), in call order; the connection writes what a turn of
 * the event loop sent in one socket write, so the stream stores the
 * messages of every run in call order, and acknowledgements are matched to
 * their messages whatever order they come in.
 */

export interface JsPipeline {
  /** Publishes to a stream subject; resolves to the stored sequence, rejects with `StreamPublishError`. */
  send(subject: string, data: Uint8Array, headers?: MsgHdrs): Promise<number>;
  /** Refuses later sends (those under way still settle). */
  close(): void;
}

/**
 * Creates the pipeline on `bus`; `timeoutMs` bounds the wait for an
 * acknowledgement (default 10000). Each send's latency goes to
 * `messaging.client.operation.duration` of `source` (default `run-executor`).
 */
export function createJsPipeline(
  bus: Bus,
  options: { readonly timeoutMs?: number; readonly source?: string } = {},
): JsPipeline {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const timer = publishTimer(options.source ?? 'run-executor');
  let closed = false;
  return {
    async send(subject, data, h): Promise<number> {
      if (closed) throw new StreamPublishError(0, 'publisher closed');
      const started = performance.now();
      try {
        const ack = await publishToStream(bus.nc, subject, data, {
          timeoutMs,
          ...(h === undefined ? {} : { headers: h }),
        });
        timer.ok.record((performance.now() - started) / 1000);
        return ack.seq;
      } catch (error) {
        timer.failed.record((performance.now() - started) / 1000);
        throw error;
      }
    },
    close(): void {
      closed = true;
    },
  };
}

/**
 * What the metrics know of a run beside its events: made once per claimed
 * run, carried by each of its events, never published.
 */
export interface RunMeta {
  /** The run's agent (the default agent's id when the task names none). */
  readonly agentId: string;
  /** When the run was accepted (its task's `created_at`), in epoch ms. */
  readonly acceptedAtMs: number;
}

/** Told of every event the stream stored (the one hook the run metrics derive from). */
export interface PublishObserver {
  /** `type` and `payload` as published (after redaction); `meta` when a run published it. */
  stored(type: string, payload: Record<string, unknown>, meta: RunMeta | undefined): void;
}

/** One event to publish (the bus publisher's input). */
export interface PipelineEvent {
  readonly type: string;
  readonly identity: {
    readonly tenant: string;
    readonly user: string;
    readonly session: string;
    readonly run?: string;
  };
  readonly payload: Record<string, unknown>;
  /**
   * Event id, and then also its `Nats-Msg-Id`: give one for an event that may
   * be published again (the stream drops the copy within its duplicate
   * window). @default a random UUID, without `Nats-Msg-Id`
   */
  readonly eventId?: string;
  /**
   * The event's id when the caller keeps it without asking for
   * `Nats-Msg-Id` (a run, to find out later whether the stream has it);
   * `eventId` wins. @default a random UUID
   */
  readonly id?: string;
  /** `occurred_at`; @default now */
  readonly occurredAt?: string;
  /** The identity's subject prefix (`eventSubject` without the type), when the caller keeps it. */
  readonly subjectPrefix?: string;
  /** `encodeToken(identity.run)` (the `Ars-Run` header), when the caller keeps it. */
  readonly runToken?: string;
  /** Trace headers to send instead of the active context's (a run computes them once). */
  readonly trace?: readonly (readonly [string, string])[];
  /** The run's metrics facts, when a run publishes it (not published). */
  readonly meta?: RunMeta | undefined;
}

/** The subject of an identity's events without the type: `eventSubject(...)` = prefix + type. */
export function eventSubjectPrefix(identity: PipelineEvent['identity']): string {
  const probe = eventSubject({ ...identity, type: 'x' });
  return probe.slice(0, -1);
}

/** The trace headers of the active context. */
export function activeTraceHeaders(): (readonly [string, string])[] {
  const out: [string, string][] = [];
  injectTraceContext((key, value) => out.push([key, value]));
  return out;
}

export interface EventPipeline {
  /**
   * Validates (a bad payload is a programming error: ServiceError `internal`),
   * redacts a `redacted`-class payload, and sends the event in call order;
   * resolves to its stream sequence once JetStream stored it.
   */
  publish(event: PipelineEvent): Promise<number>;
}

/** Options of {@link createEventPipeline}. */
export interface EventPipelineOptions {
  readonly source: string;
  readonly logger: Logger;
  /** Told of each stored event (the executor's run metrics). */
  readonly observer?: PublishObserver;
}

/** Creates the event publisher on a pipeline. */
export function createEventPipeline(js: JsPipeline, options: EventPipelineOptions): EventPipeline {
  const { logger, source, observer } = options;

  function delivered(
    type: string,
    payload: Record<string, unknown>,
  ): { type: string; payload: Record<string, unknown> } {
    const def = getEvent(type);
    if (def === undefined) throw new ServiceError('internal', `unknown event type ${type}`);
    const parsed = def.payload.safeParse(payload);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`);
      logger.error({ eventType: type, issues }, 'event rejected before publish');
      throw new ServiceError('internal', `invalid payload for event ${type}`);
    }
    if (def.class !== 'redacted') return { type, payload: parsed.data as Record<string, unknown> };
    try {
      return { type, payload: redactPayload(def.payload, parsed.data) };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { type: REDACTION_FAILED_TYPE, payload: { OriginalType: type, Reason: reason.slice(0, 200) } };
    }
  }

  return {
    async publish(event: PipelineEvent): Promise<number> {
      const out = delivered(event.type, event.payload);
      const trace = event.trace ?? activeTraceHeaders();
      const traceId = traceIdOf(trace.find(([key]) => key === 'traceparent')?.[1]);
      const stored: StoredEvent = {
        id: event.eventId ?? event.id ?? randomUUID(),
        type: out.type,
        occurred_at: event.occurredAt ?? new Date().toISOString(),
        tenant: event.identity.tenant,
        user: event.identity.user,
        session: event.identity.session,
        run: event.identity.run ?? '',
        payload: out.payload,
        ...(traceId === undefined ? {} : { trace_id: traceId }),
      };
      const h = outgoingHeaders();
      // Only a caller-chosen id can be published twice (a re-announced spawn, a
      // terminal event after a crash); a fresh random one never is, and each
      // Nats-Msg-Id costs nats-server a map entry for the duplicate window.
      if (event.eventId !== undefined) h.set(MESSAGE_ID_HEADER, stored.id);
      h.set(SOURCE_HEADER, source);
      if (stored.run !== '') h.set(EVENT_RUN_HEADER, event.runToken ?? encodeToken(stored.run));
      for (const [key, value] of trace) h.set(key, value);
      const subject =
        event.subjectPrefix !== undefined && stored.type === event.type
          ? event.subjectPrefix + stored.type
          : eventSubject(stored);
      let sequence: number;
      try {
        sequence = await js.send(subject, encodeStoredEvent(stored), h);
      } catch (error) {
        logger.warn({ err: error, eventType: stored.type }, 'event publish failed');
        throw new ServiceError('unavailable', 'the event stream did not store the event', { cause: error });
      }
      observer?.stored(stored.type, stored.payload, event.meta);
      return sequence;
    },
  };
}
