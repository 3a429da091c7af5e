import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The most bytes of a refused request's body the gateway reads and drops to
 * keep its connection open for the next request. A longer body, one of
 * unknown length (chunked), or one whose stream is gone gets
 * `Connection: close` instead: the answer goes out at once either way.
 */
export const DRAIN_LIMIT_BYTES = 65_536;

/**
 * How long a connection closed after a refusal stays half-closed, reading
 * and dropping what the client still sends, in ms. Closing a socket with
 * unread bytes resets it, and a reset makes the client's system drop the
 * answer it has not read yet: the client would see a broken pipe instead of
 * the 413 (the lingering close of other HTTP servers).
 */
export const LINGER_MS = 2_000;

/** The declared body length, when it is one number. */
function declaredLength(request: FastifyRequest): number | undefined {
  const header = request.headers['content-length'];
  if (header === undefined || !/^\d+$/.test(header)) return undefined;
  const value = Number(header);
  return Number.isSafeInteger(value) ? value : undefined;
}

const lingering = new WeakSet<Socket>();

/**
 * Makes node's close of `socket` after the answer (`destroySoon`, which it
 * calls once a `Connection: close` response is written) a lingering one: the
 * write side ends, the read side keeps reading for {@link LINGER_MS} or until
 * the client closes, then the socket goes.
 */
function lingerOnClose(socket: Socket | null | undefined): void {
  if (socket === null || socket === undefined || lingering.has(socket)) return;
  lingering.add(socket);
  socket.destroySoon = function lingeringClose(this: Socket): void {
    this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
  };
}

/**
 * Settles the body of a request answered before it arrived in full (a
 * refusal on its headers, an over-limit or malformed body refused as it
 * streamed): a short one is drained, so the keep-alive connection stays
 * usable; anything else closes the connection after the answer, lingering
 * (see {@link LINGER_MS}). Either way what still arrives is read and dropped.
 * Left alone, a partly read body stalls the connection: node stops reading
 * the socket, and the next request on it waits for the keep-alive timeout.
 */
export function settleUnreadBody(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  if (raw.complete) return;
  if (!raw.destroyed) raw.resume();
  const length = declaredLength(request);
  if (!raw.destroyed && length !== undefined && length <= DRAIN_LIMIT_BYTES) return;
  reply.header('connection', 'close');
  lingerOnClose(raw.socket);
}

/** Applies {@link settleUnreadBody} to every answer of `app` (hijacked streams excepted: they read no body). */
export function installUnreadBodyPolicy(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    settleUnreadBody(request, reply);
    done(null, payload);
  });
}
