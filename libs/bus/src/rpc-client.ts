import { Empty } from '@nats-io/transport-node';
import type { Msg } from '@nats-io/transport-node';
import { fromErrorReply, ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { injectTraceContext, recordFailedCall, SpanKind, tracingRpcClients, withSpan } from '@ars/telemetry';
import { flushNow } from './connection.ts';
import type { Bus } from './connection.ts';
import { replyMuxOf, ReplyMuxError } from './reply-mux.ts';
import { encodeIdentityHeaders } from './rpc-headers.ts';
import { rpcSubject } from './subjects.ts';
import { utf8 } from './utf8.ts';
import { outgoingHeaders } from './outgoing-headers.ts';

/** Options of {@link createRpcClient}. */
export interface RpcClientOptions {
  /** Default time to wait for a reply, in milliseconds. @default 10000 */
  readonly timeoutMs?: number;
  /**
   * Write each request to the socket at once (`flushNow`) rather than with
   * the rest of the turn's sends (`coalesceFlushes`): for a caller that
   * somebody waits on, the gateway answering an HTTP request. Under load a
   * turn of the event loop holds a great deal of other work, and its end
   * comes late. @default false
   */
  readonly sendAtOnce?: boolean;
}

export interface CallOptions {
  /** Overrides the client's default timeout for this call, in milliseconds. */
  readonly timeoutMs?: number;
}

export interface RpcClient {
  /**
   * Calls `method` of `service` as `identity` and returns the reply's result.
   * Throws ServiceError: the remote code, message, `retryable` and refusal
   * `reason` on an error reply, `unavailable` when no replica listens, `timeout` when none answers in time.
   */
  call(
    service: string,
    method: string,
    identity: VerifiedIdentity,
    body: unknown,
    options?: CallOptions,
  ): Promise<unknown>;
}

export const DEFAULT_RPC_TIMEOUT_MS = 10_000;
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Maps a transport failure of a request to the catalogue. */
function transportError(error: unknown, service: string, method: string, timeoutMs: number): ServiceError {
  const reason = error instanceof ReplyMuxError ? error.reason : 'publish_failed';
  if (reason === 'no_responders') {
    return new ServiceError('unavailable', `service ${service} is not available for ${method}`, { cause: error });
  }
  if (reason === 'timeout') {
    return new ServiceError('timeout', `service ${service} did not answer ${method} within ${timeoutMs} ms`, {
      cause: error,
    });
  }
  const detail = error instanceof Error ? error.message : String(error);
  if (detail.includes('max_payload')) {
    return new ServiceError('payload_too_large', 'the request is larger than the bus allows', { cause: error });
  }
  return new ServiceError('unavailable', `request to ${service} failed: ${detail}`, { cause: error });
}

function parseReply(msg: Msg, service: string): unknown {
  let reply: unknown;
  try {
    reply = JSON.parse(decoder.decode(msg.data));
  } catch (error) {
    throw new ServiceError('internal', `malformed reply from ${service}`, { cause: error });
  }
  if (typeof reply === 'object' && reply !== null) {
    const r = reply as { ok?: unknown; result?: unknown; error?: unknown };
    if (r.ok === true) return r.result;
    if (r.ok === false && typeof r.error === 'object' && r.error !== null) throw fromErrorReply(r.error);
  }
  throw new ServiceError('internal', `malformed reply from ${service}`);
}

/** Creates the client side of the RPC convention of {@link serveService}. */
export function createRpcClient(bus: Bus, options: RpcClientOptions = {}): RpcClient {
  const defaultTimeout = options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  const sendAtOnce = options.sendAtOnce ?? false;
  return {
    async call(service, method, identity, body, callOptions = {}): Promise<unknown> {
      const subject = rpcSubject(service, method);
      const timeoutMs = callOptions.timeoutMs ?? defaultTimeout;
      const attributes = { 'rpc.system': 'nats', 'rpc.service': service, 'rpc.method': method };
      const send = async (): Promise<unknown> => {
        const h = outgoingHeaders();
        encodeIdentityHeaders(identity, (key, value) => h.set(key, value));
        injectTraceContext((key, value) => h.set(key, value));
        const payload = body === undefined ? Empty : utf8(JSON.stringify(body));
        let msg: Msg;
        try {
          const replied = replyMuxOf(bus.nc).request(subject, payload, { timeoutMs, headers: h });
          if (sendAtOnce) flushNow(bus.nc);
          msg = await replied;
        } catch (error) {
          throw transportError(error, service, method, timeoutMs);
        }
        return parseReply(msg, service);
      };
      const name = `${service}/${method}`;
      if (tracingRpcClients()) return withSpan(name, { kind: SpanKind.CLIENT, attributes }, send);
      // No span while the call succeeds: the service's SERVER span is the caller's span's child.
      const startedAt = performance.now();
      try {
        return await send();
      } catch (error) {
        recordFailedCall(name, { kind: SpanKind.CLIENT, attributes }, startedAt, error);
        throw error;
      }
    },
  };
}
