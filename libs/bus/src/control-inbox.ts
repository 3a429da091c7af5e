import type { Msg } from '@nats-io/transport-node';
import { context, extractTraceContext, injectTraceContext, tracingActive } from '@ars/telemetry';
import type { Bus } from './connection.ts';
import { replyMuxOf, ReplyMuxError } from './reply-mux.ts';
import { controlSubject } from './subjects.ts';
import { utf8 } from './utf8.ts';
import { outgoingHeaders } from './outgoing-headers.ts';
import { headerOf } from './incoming-headers.ts';

/**
 * A live run's control inbox (`controlSubject(task_id)`), both sides: the
 * executor serving it while the run lives, and whoever steers the run
 * (the API side's steering controls, a cancelled parent's cascade)
 * requesting it. Bodies are JSON; the reply says whether the control was
 * queued. "No responders" means the run has no live inbox.
 */

/** What a live inbox answers: queued, or refused with an error code of the catalogue. */
export type ControlInboxReply =
  { readonly accepted: true } | { readonly accepted: false; readonly code: string; readonly message?: string };

/** Why a control got no usable answer. */
export type ControlDeliveryFailure =
  /** Nobody listens on the run's inbox: the run is not live on any executor. */
  | 'no_live_inbox'
  /** The inbox did not answer within the request's timeout. */
  | 'timeout'
  /** The request could not be sent or its answer could not arrive (connection closed or dropped). */
  | 'unreachable'
  /** The answer is not a {@link ControlInboxReply}. */
  | 'malformed_reply';

/** Thrown by {@link requestControl} when the inbox gave no usable answer. */
export class ControlDeliveryError extends Error {
  readonly reason: ControlDeliveryFailure;
  constructor(reason: ControlDeliveryFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ControlDeliveryError';
    this.reason = reason;
  }
}

/** Options of {@link requestControl}. */
export interface ControlRequestOptions {
  /** How long to wait for the inbox's answer, in milliseconds. */
  readonly timeoutMs: number;
}
const decoder = new TextDecoder();

const DELIVERY_FAILURES: Readonly<Record<string, ControlDeliveryFailure>> = {
  no_responders: 'no_live_inbox',
  timeout: 'timeout',
};

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(data));
  } catch {
    // Not JSON: the callers treat it like any other body of the wrong shape.
    return undefined;
  }
}

function replyOf(data: Uint8Array): ControlInboxReply {
  const body = parseJson(data);
  const r = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (r.accepted === true) return { accepted: true };
  if (r.accepted === false && typeof r.code === 'string') {
    return { accepted: false, code: r.code, ...(typeof r.message === 'string' ? { message: r.message } : {}) };
  }
  throw new ControlDeliveryError('malformed_reply', 'malformed reply from the run inbox');
}

/**
 * Sends `envelope` (JSON) to the live inbox of run `taskId`, with the active
 * trace context in its headers, and returns the inbox's answer. Throws
 * {@link ControlDeliveryError} when there was no usable answer.
 */
export async function requestControl(
  bus: Bus,
  taskId: string,
  envelope: object,
  options: ControlRequestOptions,
): Promise<ControlInboxReply> {
  const h = outgoingHeaders();
  injectTraceContext((key, value) => h.set(key, value));
  let msg: Msg;
  try {
    msg = await replyMuxOf(bus.nc).request(controlSubject(taskId), utf8(JSON.stringify(envelope)), {
      timeoutMs: options.timeoutMs,
      headers: h,
    });
  } catch (error) {
    if (!(error instanceof ReplyMuxError)) throw error;
    const reason = DELIVERY_FAILURES[error.reason] ?? 'unreachable';
    throw new ControlDeliveryError(reason, `control not delivered to run ${taskId}: ${error.message}`, {
      cause: error,
    });
  }
  return replyOf(msg.data);
}

/** A served control inbox. */
export interface ControlInbox {
  /**
   * Stops listening. The subscription is drained, not dropped: a control
   * nats-server routed here before it saw the unsubscribe still reaches the
   * handler and gets its answer (the run, ended or leaving, rejects it on
   * the stream). Unsubscribing dropped such a control on the client side,
   * so its sender waited out its timeout instead of hearing `accepted` or,
   * a moment later, "no live inbox".
   */
  close(): void;
}

/**
 * Serves the control inbox of run `taskId`: `onControl` gets each request's
 * JSON body (`undefined` when it is not JSON) and answers it once with
 * `reply`.
 */
export function serveControlInbox(
  bus: Bus,
  taskId: string,
  onControl: (body: unknown, reply: (answer: ControlInboxReply) => void) => void,
): ControlInbox {
  const sub = bus.nc.subscribe(controlSubject(taskId), {
    callback: (error, msg) => {
      // A subscription error (a permission refusal) is reported on the connection's status, which the bus logs.
      if (error !== null) return;
      const handle = () => onControl(parseJson(msg.data), (answer) => msg.respond(utf8(JSON.stringify(answer))));
      // The sender's trace is active while the control is handled (its span links to it); no work when nothing traces.
      if (!tracingActive()) handle();
      else
        context.with(
          extractTraceContext((key) => headerOf(msg, key) || undefined),
          handle,
        );
    },
  });
  return {
    close(): void {
      // A drain refused by a closed connection has nothing left to deliver: drop the subscription instead.
      sub.drain().catch(() => sub.unsubscribe());
    },
  };
}
