import { randomUUID } from 'node:crypto';
import type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/transport-node';

/**
 * Requests over one inbox subscription per connection, for the hot RPC path.
 *
 * nats-core's `request` costs, per call, a deferred, a timer, and an Error
 * built on every resolution (its `cancel` constructs a `RequestError` even
 * after success): measured at 3-5% of a busy service's CPU. Here a request
 * is a core publish with a reply subject `<inbox>.<token>` and a map entry;
 * one timer, set for the earliest deadline, fails the requests that waited
 * too long. The server's no-responders status (503) and a closed
 * connection are reported as {@link ReplyMuxError}s.
 */

/** Why a request got no reply. */
export type ReplyFailure = 'no_responders' | 'timeout' | 'closed' | 'publish_failed';

export class ReplyMuxError extends Error {
  readonly reason: ReplyFailure;
  constructor(reason: ReplyFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReplyMuxError';
    this.reason = reason;
  }
}

/** Options of one {@link ReplyMux.request}. */
export interface MuxRequestOptions {
  readonly timeoutMs: number;
  readonly headers?: MsgHdrs;
  /**
   * Fail it `publish_failed` as soon as the connection drops instead of
   * waiting for its timeout, for a caller that finds out by itself whether
   * the message arrived (a stream publish). @default false
   */
  readonly failOnDisconnect?: boolean;
}

export interface ReplyMux {
  /** Publishes `data` to `subject` and resolves with the first reply; rejects with {@link ReplyMuxError}. */
  request(subject: string, data: Uint8Array, options: MuxRequestOptions): Promise<Msg>;
  /** Fails every pending request (`closed`) and stops listening. */
  close(): void;
}

interface Pending {
  readonly resolve: (msg: Msg) => void;
  readonly reject: (error: ReplyMuxError) => void;
  readonly deadline: number;
  readonly timeoutMs: number;
  readonly failOnDisconnect: boolean;
}

const NO_RESPONDERS = 503;

/** Creates a mux on `nc`; its subscription is made on the first request. */
export function createReplyMux(nc: NatsConnection): ReplyMux {
  const inbox = `_INBOX.${randomUUID().replaceAll('-', '')}`;
  const prefixLength = inbox.length + 1;
  const pending = new Map<number, Pending>();
  let counter = 0;
  let sub: Subscription | undefined;
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Number.POSITIVE_INFINITY;

  const take = (token: number): Pending | undefined => {
    const entry = pending.get(token);
    if (entry !== undefined) pending.delete(token);
    return entry;
  };

  /** Fails what is overdue, then waits for the next earliest deadline. */
  const expire = (): void => {
    timer = undefined;
    timerAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [token, entry] of pending) {
      if (entry.deadline <= now) {
        pending.delete(token);
        entry.reject(new ReplyMuxError('timeout', `no reply within ${entry.timeoutMs} ms`));
      } else if (entry.deadline < next) next = entry.deadline;
    }
    if (next !== Number.POSITIVE_INFINITY) arm(next);
  };

  const arm = (deadline: number): void => {
    if (deadline >= timerAt) return;
    if (timer !== undefined) clearTimeout(timer);
    timerAt = deadline;
    timer = setTimeout(expire, Math.max(0, deadline - Date.now()));
    timer.unref();
  };

  const failAll = (reason: ReplyFailure, message: string): void => {
    for (const token of [...pending.keys()]) take(token)?.reject(new ReplyMuxError(reason, message));
  };

  /** A reply to a request sent before a disconnect may never come: those that asked are failed at once. */
  const watchDisconnects = async (): Promise<void> => {
    for await (const status of nc.status()) {
      if (status.type !== 'disconnect') continue;
      for (const [token, entry] of pending) {
        if (!entry.failOnDisconnect) continue;
        pending.delete(token);
        entry.reject(new ReplyMuxError('publish_failed', 'the connection dropped before the reply'));
      }
    }
  };

  const listen = (): void => {
    if (sub !== undefined) return;
    void nc.closed().then(() => failAll('closed', 'the connection closed'));
    // The status iterator ends, or fails, only with the connection; `closed()` above fails what is pending then.
    void watchDisconnects().catch(() => undefined);
    sub = nc.subscribe(`${inbox}.*`, {
      callback: (error, msg) => {
        if (error !== null) return;
        const entry = take(Number(msg.subject.slice(prefixLength)));
        if (entry === undefined) return; // late: already timed out
        if (msg.data.length === 0 && msg.headers?.code === NO_RESPONDERS) {
          entry.reject(new ReplyMuxError('no_responders', 'no responders'));
        } else entry.resolve(msg);
      },
    });
  };

  return {
    request(subject, data, options): Promise<Msg> {
      if (nc.isClosed()) return Promise.reject(new ReplyMuxError('closed', 'the connection is closed'));
      listen();
      const token = ++counter;
      return new Promise<Msg>((resolve, reject) => {
        const deadline = Date.now() + options.timeoutMs;
        const failOnDisconnect = options.failOnDisconnect === true;
        pending.set(token, { resolve, reject, deadline, timeoutMs: options.timeoutMs, failOnDisconnect });
        try {
          nc.publish(subject, data, {
            reply: `${inbox}.${token}`,
            ...(options.headers === undefined ? {} : { headers: options.headers }),
          });
        } catch (error) {
          take(token);
          const message = error instanceof Error ? error.message : String(error);
          reject(new ReplyMuxError(nc.isClosed() ? 'closed' : 'publish_failed', message, { cause: error }));
          return;
        }
        arm(deadline);
      });
    },

    close(): void {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      timerAt = Number.POSITIVE_INFINITY;
      sub?.unsubscribe();
      sub = undefined;
      failAll('closed', 'the mux was closed');
    },
  };
}

/** One mux per connection, shared by every caller on it (RPC clients, stream publishes). */
const muxes = new WeakMap<NatsConnection, ReplyMux>();

/** The connection's shared mux. */
export function replyMuxOf(nc: NatsConnection): ReplyMux {
  let mux = muxes.get(nc);
  if (mux === undefined) {
    mux = createReplyMux(nc);
    muxes.set(nc, mux);
  }
  return mux;
}
