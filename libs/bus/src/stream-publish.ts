import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import { isConnectionUp } from './connection.ts';
import { replyMuxOf, ReplyMuxError } from './reply-mux.ts';
import { outgoingHeaders } from './outgoing-headers.ts';

/**
 * A JetStream publish on the connection's shared reply mux: the message goes
 * out with a reply subject and the stream's acknowledgement comes back there.
 * What `js.publish` does, without nats-core's per-request deferred, timer
 * and Error (see `reply-mux.ts`).
 */

/** The stream's acknowledgement. */
export interface StreamAck {
  readonly stream: string;
  readonly seq: number;
  readonly duplicate: boolean;
}

/** The stream refused or never acknowledged the message. */
export class StreamPublishError extends Error {
  /**
   * JetStream's error code (`err_code`, e.g. 10071 wrong last sequence), or
   * 503 no stream takes the subject, 408 no acknowledgement in time, 0 other.
   */
  readonly code: number;
  constructor(code: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StreamPublishError';
    this.code = code;
  }
}

/**
 * True when `error`, or the error it was thrown for (its `cause`), is a
 * publish that found no stream to take it (503: nats-server restarting,
 * JetStream recovering, or no connection, when it is not sent at all), got
 * no acknowledgement in time (408), or was dropped by the connection (its
 * acknowledgement still due when the connection dropped: the stream may
 * hold it or not): the message may be stored on a later try. A refusal by
 * the stream (a JetStream error code) is not.
 */
export function isStreamUnreachable(error: unknown): boolean {
  const failure = error instanceof StreamPublishError ? error : (error as { cause?: unknown } | null)?.cause;
  if (!(failure instanceof StreamPublishError)) return false;
  if (failure.code === 503 || failure.code === 408) return true;
  return failure.code === 0 && failure.cause instanceof ReplyMuxError && failure.cause.reason === 'publish_failed';
}

/** The header a stream deduplicates a publish by, within its duplicate window; a delivered message keeps it. */
export const MESSAGE_ID_HEADER = 'Nats-Msg-Id';

export interface StreamPublishOptions {
  /** `Nats-Msg-Id`: the stream drops a second message with it within its duplicate window. */
  readonly msgId?: string;
  readonly headers?: MsgHdrs;
  /** @default 5000 */
  readonly timeoutMs?: number;
}

const decoder = new TextDecoder();

/** Publishes `data` to a stream subject; resolves to the acknowledgement, rejects with {@link StreamPublishError}. */
export async function publishToStream(
  nc: NatsConnection,
  subject: string,
  data: Uint8Array,
  options: StreamPublishOptions = {},
): Promise<StreamAck> {
  const h = options.headers ?? (options.msgId === undefined ? undefined : outgoingHeaders());
  if (options.msgId !== undefined) h?.set(MESSAGE_ID_HEADER, options.msgId);
  const timeoutMs = options.timeoutMs ?? 5_000;
  // Sent now it would be dropped by the client's next reconnect attempt: refused unsent instead.
  if (!isConnectionUp(nc)) throw new StreamPublishError(503, 'no connection to nats-server: not sent');
  let reply;
  try {
    reply = await replyMuxOf(nc).request(subject, data, {
      timeoutMs,
      failOnDisconnect: true,
      ...(h === undefined ? {} : { headers: h }),
    });
  } catch (error) {
    const reason = error instanceof ReplyMuxError ? error.reason : 'publish_failed';
    const code = reason === 'no_responders' ? 503 : reason === 'timeout' ? 408 : 0;
    const detail = reason === 'no_responders' ? `no stream takes ${subject}` : (error as Error).message;
    throw new StreamPublishError(code, detail, { cause: error });
  }
  let ack: { stream?: string; seq?: number; duplicate?: boolean; error?: { err_code?: number; description?: string } };
  try {
    ack = JSON.parse(decoder.decode(reply.data)) as typeof ack;
  } catch (error) {
    throw new StreamPublishError(0, 'malformed acknowledgement', { cause: error });
  }
  // A refusal carries `seq: 0` beside its error: look at the error first.
  if (ack.error !== undefined)
    throw new StreamPublishError(ack.error.err_code ?? 0, ack.error.description ?? 'refused');
  if (typeof ack.stream !== 'string' || ack.stream === '' || typeof ack.seq !== 'number') {
    throw new StreamPublishError(0, 'malformed acknowledgement');
  }
  return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true };
}
