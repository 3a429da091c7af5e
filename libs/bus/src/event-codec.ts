import { ServiceError } from '@ars/contracts';
import type { EventFrame } from '@ars/contracts';
import { utf8 } from './utf8.ts';

/** The JSON body stored on the EVENTS stream for one event. */
export interface StoredEvent {
  /** The event id (also the `Nats-Msg-Id` of its publish when the publisher chose it). */
  readonly id: string;
  readonly type: string;
  /** RFC 3339. */
  readonly occurred_at: string;
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  /** `''` for an event of no run. */
  readonly run: string;
  readonly payload: Record<string, unknown>;
  /** The trace the event was published in (32 lowercase hex digits); the frame's `trace_id`. Absent outside a trace. */
  readonly trace_id?: string;
}

const TRACE_ID = /^[0-9a-f]{32}$/;

/**
 * The trace id of a `traceparent` header (`00-<trace id>-<span id>-<flags>`),
 * or undefined when there is none or it is malformed or all zeros.
 */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  if (traceparent === undefined || traceparent.length < 55) return undefined;
  const id = traceparent.slice(3, 35);
  return TRACE_ID.test(id) && id !== '00000000000000000000000000000000' ? id : undefined;
}
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Serialises a stored event. */
export function encodeStoredEvent(event: StoredEvent): Uint8Array {
  return utf8(JSON.stringify(event));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses a stored event body; throws ServiceError `internal` on anything malformed. */
export function decodeStoredEvent(data: Uint8Array): StoredEvent {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch (error) {
    throw new ServiceError('internal', 'stored event is not JSON', { cause: error });
  }
  const strings = ['id', 'type', 'occurred_at', 'tenant', 'user', 'session', 'run'] as const;
  if (!isRecord(value) || !strings.every((k) => typeof value[k] === 'string') || !isRecord(value.payload)) {
    throw new ServiceError('internal', 'stored event has an unexpected shape');
  }
  return value as unknown as StoredEvent;
}

/**
 * Turns a message read from the EVENTS stream (a JetStream message or an
 * `EventRecord` of the range reader) into the SSE frame, with
 * `sequence` = the stream sequence (the `Last-Event-ID` cursor).
 */
export function decodeEventMessage(msg: { readonly seq: number; readonly data: Uint8Array }): EventFrame {
  let stored: StoredEvent;
  try {
    stored = decodeStoredEvent(msg.data);
  } catch (error) {
    throw new ServiceError('internal', `malformed event at stream sequence ${msg.seq}`, { cause: error });
  }
  return {
    type: stored.type,
    sequence: msg.seq,
    occurred_at: stored.occurred_at,
    tenant: stored.tenant,
    user: stored.user,
    session: stored.session,
    run: stored.run,
    payload: stored.payload,
    ...(typeof stored.trace_id === 'string' && TRACE_ID.test(stored.trace_id) ? { trace_id: stored.trace_id } : {}),
  };
}
