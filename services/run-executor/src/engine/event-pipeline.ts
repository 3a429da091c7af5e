import { randomUUID } from 'node:crypto';
import { getEvent, ServiceError } from '@ars/contracts';
import {
  encodeStoredEvent,
  eventSubject,
  headers,
  redactPayload,
  REDACTION_FAILED_TYPE,
  SOURCE_HEADER,
} from '@ars/bus';
import type { Bus, Msg, MsgHdrs, StoredEvent, Subscription } from '@ars/bus';
import { injectTraceContext } from '@ars/telemetry';
import type { Logger } from '@ars/telemetry';

/**
 * Pipelined JetStream publishing for the engine's hot path (events, leases).
 * Each message leaves with a core publish whose reply subject is a token under
 * one inbox, and JetStream's acknowledgement comes back there: nothing per
 * message but a map entry (no request object, timer or error capture each,
 * which at a few dozen messages a run is most of a request-based publish's
 * cost). Messages are published at once, in call order (the bus connection
 * writes what a turn of the event loop sent in one socket write, so the
 * messages of every run emitted meanwhile share it, and the stream stores
 * them in call order); acknowledgements are matched by token, whatever order
 * they come in. One timer fails those not acknowledged in time.
 */

/** A JetStream refusal (`code` is the JetStream error code, e.g. 10071 wrong last sequence). */
export class JsPublishError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = 'JsPublishError';
    this.code = code;
  }
}

/** JetStream's error code for a failed `Nats-Expected-Last-Subject-Sequence` check. */
export const WRONG_LAST_SEQUENCE = 10071;

export interface JsPipeline {
  /** Publishes to a stream subject; resolves to the stored sequence, rejects with {@link JsPublishError}. */
  send(subject: string, data: Uint8Array, headers?: MsgHdrs): Promise<number>;
  close(): void;
}

interface Pending {
  readonly resolve: (sequence: number) => void;
  readonly reject: (error: unknown) => void;
  readonly sentAt: number;
}

const decoder = new TextDecoder();

function parseAck(msg: Msg): { sequence: number } | { code: number; error: string } {
  if (msg.headers?.code === 503) return { code: 503, error: 'no stream stores this subject' };
  try {
    const ack = JSON.parse(decoder.decode(msg.data)) as {
      seq?: number;
      error?: { err_code?: number; description?: string };
    };
    // A refusal carries `seq: 0` beside its error: look at the error first.
    if (ack.error !== undefined) return { code: ack.error.err_code ?? 0, error: ack.error.description ?? 'refused' };
    if (typeof ack.seq === 'number' && ack.seq > 0) return { sequence: ack.seq };
    return { code: 0, error: 'malformed acknowledgement' };
  } catch {
    return { code: 0, error: 'malformed acknowledgement' };
  }
}

/** Creates the pipeline on `bus`; `timeoutMs` bounds the wait for an acknowledgement (default 10000). */
export function createJsPipeline(bus: Bus, options: { readonly timeoutMs?: number } = {}): JsPipeline {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const inbox = `_INBOX.${randomUUID().replaceAll('-', '')}`;
  const pending = new Map<number, Pending>();
  let counter = 0;
  let sub: Subscription | undefined;
  let sweep: NodeJS.Timeout | undefined;

  const settle = (token: number, outcome: { sequence: number } | { code: number; error: string }): void => {
    const entry = pending.get(token);
    if (entry === undefined) return;
    pending.delete(token);
    if ('sequence' in outcome) entry.resolve(outcome.sequence);
    else entry.reject(new JsPublishError(outcome.code, outcome.error));
  };

  const ensureListening = (): void => {
    if (sub !== undefined) return;
    sub = bus.nc.subscribe(`${inbox}.*`, {
      callback: (error, msg) => {
        if (error === null) settle(Number(msg.subject.slice(inbox.length + 1)), parseAck(msg));
      },
    });
    sweep = setInterval(
      () => {
        const oldest = Date.now() - timeoutMs;
        for (const [token, entry] of pending) {
          if (entry.sentAt < oldest) settle(token, { code: 408, error: `no acknowledgement within ${timeoutMs} ms` });
        }
      },
      Math.min(1_000, timeoutMs),
    );
    sweep.unref();
  };

  return {
    send(subject, data, h): Promise<number> {
      if (bus.nc.isClosed()) return Promise.reject(new JsPublishError(503, 'the bus connection is closed'));
      ensureListening();
      const token = ++counter;
      return new Promise<number>((resolve, reject) => {
        pending.set(token, { resolve, reject, sentAt: Date.now() });
        try {
          bus.nc.publish(subject, data, { reply: `${inbox}.${token}`, ...(h ? { headers: h } : {}) });
        } catch (error) {
          settle(token, { code: 0, error: error instanceof Error ? error.message : String(error) });
        }
      });
    },

    close(): void {
      clearInterval(sweep);
      sub?.unsubscribe();
      sub = undefined;
      for (const token of [...pending.keys()]) settle(token, { code: 0, error: 'publisher closed' });
    },
  };
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
  /** The identity's subject prefix (`eventSubject` without the type), when the caller keeps it. */
  readonly subjectPrefix?: string;
  /** Trace headers to send instead of the active context's (a run computes them once). */
  readonly trace?: readonly (readonly [string, string])[];
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
}

/** Creates the event publisher on a pipeline. */
export function createEventPipeline(js: JsPipeline, options: EventPipelineOptions): EventPipeline {
  const { logger, source } = options;

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
      const stored: StoredEvent = {
        id: event.eventId ?? randomUUID(),
        type: out.type,
        occurred_at: new Date().toISOString(),
        tenant: event.identity.tenant,
        user: event.identity.user,
        session: event.identity.session,
        run: event.identity.run ?? '',
        payload: out.payload,
      };
      const h = headers();
      // Only a caller-chosen id can be published twice (a re-announced spawn, a
      // terminal event after a crash); a fresh random one never is, and each
      // Nats-Msg-Id costs nats-server a map entry for the duplicate window.
      if (event.eventId !== undefined) h.set('Nats-Msg-Id', stored.id);
      h.set(SOURCE_HEADER, source);
      if (event.trace === undefined) injectTraceContext((key, value) => h.set(key, value));
      else for (const [key, value] of event.trace) h.set(key, value);
      const subject =
        event.subjectPrefix !== undefined && stored.type === event.type
          ? event.subjectPrefix + stored.type
          : eventSubject(stored);
      try {
        return await js.send(subject, encodeStoredEvent(stored), h);
      } catch (error) {
        logger.warn({ err: error, eventType: stored.type }, 'event publish failed');
        throw new ServiceError('unavailable', 'the event stream did not store the event', { cause: error });
      }
    },
  };
}
