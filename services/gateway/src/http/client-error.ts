import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ServiceError } from '@ars/contracts';
import type { FastifyBaseLogger } from 'fastify';

/**
 * How long a refused connection stays half-closed to take in what the client
 * was still sending, in ms: closing a socket with unread bytes resets it, and
 * a reset can overtake the answer on its way to the client.
 */
export const LINGER_MS = 2_000;

/** A parser error of node's `clientError` event. */
interface ClientError extends Error {
  readonly code?: string;
}

/** The refusal for a request node's HTTP parser would not hand to fastify. */
export function clientErrorRefusal(error: ClientError): ServiceError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ServiceError('headers_too_large', 'the request headers are larger than the gateway accepts');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ServiceError('request_timeout', 'the request did not arrive in full in time');
    default:
      return new ServiceError('invalid_request', 'the request is not valid HTTP/1.1');
  }
}

/** The refusal as a complete HTTP/1.1 response that closes the connection. */
export function clientErrorResponse(refusal: ServiceError): string {
  const body = JSON.stringify(refusal.toEnvelope());
  return [
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** Sockets already answered: node's parser can report more errors on the bytes that follow. */
const answered = new WeakSet<Socket>();

/** A response in flight on the socket (node's own bookkeeping), whose headers may already be out. */
function responseStarted(socket: Socket): boolean {
  const pending = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return pending?.headersSent === true;
}

/**
 * fastify's `clientErrorHandler`: node's HTTP parser refused the bytes
 * (headers too large, not HTTP, a bad chunk, too slow) before any request
 * object exists. Answers with the envelope and `Connection: close`, then
 * lingers half-closed for {@link LINGER_MS} reading and dropping whatever the
 * client still sends, so that a reset does not overtake the answer. As
 * node's default: a connection reset or a socket whose response already
 * began is only destroyed.
 */
export function createClientErrorHandler(logger: FastifyBaseLogger) {
  return (error: ClientError, socket: Socket): void => {
    if (answered.has(socket)) return;
    answered.add(socket);
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    if (!socket.writable || responseStarted(socket)) {
      socket.destroy();
      return;
    }
    const refusal = clientErrorRefusal(error);
    logger.info(
      { code: refusal.code, status: refusal.status, reason: error.code },
      'connection refused by the HTTP parser',
    );
    socket.setTimeout(LINGER_MS, () => socket.destroy());
    socket.end(clientErrorResponse(refusal));
    socket.resume();
  };
}
