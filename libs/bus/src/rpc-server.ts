import { Svcm } from '@nats-io/services';
import type { Service, ServiceMsg } from '@nats-io/services';
import { isServiceError, ServiceError, toErrorReply, toServiceError } from '@ars/contracts';
import type { ErrorReply, VerifiedIdentity } from '@ars/contracts';
import { extractTraceContext, SpanKind, SpanStatusCode, withSpan } from '@ars/telemetry';
import type { Logger, Span } from '@ars/telemetry';
import type { NatsConnection } from '@nats-io/transport-node';
import { flushNow } from './connection.ts';
import type { Bus } from './connection.ts';
import { decodeIdentityHeaders } from './rpc-headers.ts';
import { rpcSubject } from './subjects.ts';
import { utf8 } from './utf8.ts';
import { headerOf } from './incoming-headers.ts';

/** One request as a handler sees it. */
export interface RpcRequest {
  readonly method: string;
  /** The identity the gateway verified, read from the request headers. */
  readonly identity: VerifiedIdentity;
  /** The parsed JSON body; `undefined` for an empty body. */
  readonly body: unknown;
}

/** Handles one method; throw a ServiceError to answer with its code. */
export type RpcHandler = (request: RpcRequest) => Promise<unknown>;

/** The reply envelope on the wire; the error half is `ErrorReply` of `@ars/contracts` (with `retryable` and `reason`). */
export type RpcReply =
  { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly error: ErrorReply };

/** Options of {@link serveService}. */
export interface ServeOptions {
  /** Service name: the services-API name, the queue group and the subject token. */
  readonly service: string;
  /** Semantic version reported by `$SRV.INFO`. */
  readonly version: string;
  /** This replica's id, reported in the service metadata as `instance_id`. */
  readonly instanceId: string;
  /** One handler per method name (`tasks.get`). */
  readonly handlers: Readonly<Record<string, RpcHandler>>;
  readonly logger: Logger;
  readonly description?: string;
  /** Extra service metadata for `$SRV.INFO`; `instance_id` is always `instanceId`. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Extra metadata per method's endpoint; `method` is always the method name. */
  readonly endpointMetadata?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Methods answered without a span of their own (health probes: a root trace every few seconds is noise). */
  readonly untracedMethods?: readonly string[];
}

export interface ServedService {
  /** The services-API id of this replica (as `$SRV.INFO` reports it). */
  readonly id: string;
  /** Stops answering (drains the endpoint subscriptions). */
  stop(): Promise<void>;
}
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Endpoint names allow `[-\w]` only: `tasks.get` → `tasks-get`. */
export function endpointName(method: string): string {
  return method.replaceAll('.', '-');
}

function decodeBody(data: Uint8Array): unknown {
  if (data.length === 0) return undefined;
  try {
    return JSON.parse(decoder.decode(data)) as unknown;
  } catch (error) {
    // Never echo the body: it may be up to max_payload long.
    throw new ServiceError('invalid_request', 'request body is not valid JSON', { cause: error });
  }
}

function headerReader(msg: ServiceMsg): (key: string) => string | undefined {
  return (key) => headerOf(msg, key);
}

function errorReply(error: ServiceError): RpcReply {
  return { ok: false, error: toErrorReply(error) };
}

interface EndpointContext {
  readonly service: string;
  readonly method: string;
  readonly handler: RpcHandler;
  readonly logger: Logger;
  readonly traced: boolean;
  /** Where the reply goes out; with `replyAtOnce`, written to the socket as soon as it is sent. */
  readonly nc: NatsConnection;
  /** A method of the public contract: its caller, the gateway, answers an HTTP request waiting on this reply. */
  readonly replyAtOnce: boolean;
}

/**
 * True for a method of the public contract, false for an internal
 * `_<area>.<verb>` endpoint. The gateway calls the former for an HTTP
 * client that waits, so their replies leave at once (`flushNow`) rather
 * than with the rest of the turn's sends; the internal calls, many per run,
 * keep sharing the turn's one write.
 */
export function isPublicMethod(method: string): boolean {
  return !method.startsWith('_');
}

/** Runs the handler; every outcome becomes a reply, logged with the span's trace id. */
async function handleInSpan(ctx: EndpointContext, msg: ServiceMsg, span: Span): Promise<RpcReply> {
  try {
    const identity = decodeIdentityHeaders(headerReader(msg));
    const body = decodeBody(msg.data);
    const result = await ctx.handler({ method: ctx.method, identity, body });
    return { ok: true, result: result === undefined ? null : result };
  } catch (thrown) {
    const error = toServiceError(thrown);
    span.setAttribute('ars.error_code', error.code);
    if (!isServiceError(thrown)) {
      ctx.logger.error({ err: thrown, method: ctx.method }, 'rpc handler failed');
    } else if (error.code === 'unavailable' || error.code === 'timeout') {
      // A dependency that did not answer: the caller retries; an outage shows as many of these, not as one error.
      ctx.logger.warn({ code: error.code, method: ctx.method, message: error.message }, 'rpc dependency unavailable');
    } else if (error.status >= 500 && error.code !== 'unimplemented') {
      ctx.logger.error({ code: error.code, method: ctx.method, message: error.message }, 'rpc handler failed');
    } else {
      // A refusal, or a surface not built yet: an expected answer, not an outage.
      ctx.logger.info({ code: error.code, method: ctx.method }, 'rpc request refused');
    }
    if (error.status >= 500) {
      span.recordException(thrown instanceof Error ? thrown : String(thrown));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.code });
    }
    return errorReply(error);
  }
}

/** True for the client's refusal of a message larger than the server's `max_payload`. */
function isOversize(error: unknown): boolean {
  return error instanceof Error && error.message.includes('max_payload');
}

/**
 * The answer when the reply itself cannot be sent. A result larger than the
 * bus carries is `payload_too_large` (413): the caller asked for more than
 * one reply holds and may ask for less (a smaller `limit`); anything else
 * (a closed connection) is `internal`.
 */
function undeliverable(error: unknown, bytes: number): ServiceError {
  if (isOversize(error)) {
    return new ServiceError(
      'payload_too_large',
      `the reply (${bytes} bytes) is larger than the bus carries; ask for less, for example a smaller limit`,
    );
  }
  return new ServiceError('internal', 'the reply could not be sent');
}

function respond(ctx: EndpointContext, msg: ServiceMsg, reply: RpcReply): void {
  const data = utf8(JSON.stringify(reply));
  try {
    if (reply.ok) msg.respond(data);
    else msg.respondError(reply.error.status, reply.error.code, data);
  } catch (error) {
    // The caller must still get an answer, and one that fits.
    const fallback = undeliverable(error, data.length);
    const fields = { err: error, method: ctx.method, bytes: data.length, code: fallback.code };
    if (fallback.code === 'internal') ctx.logger.error(fields, 'rpc reply could not be sent');
    else ctx.logger.warn(fields, 'rpc reply too large for the bus');
    msg.respondError(fallback.status, fallback.code, utf8(JSON.stringify(errorReply(fallback))));
  }
}

async function handle(ctx: EndpointContext, msg: ServiceMsg): Promise<void> {
  if (msg.reply === '') return; // a publish, not a request: nobody to answer
  const parent = extractTraceContext(headerReader(msg));
  const attributes = { 'rpc.system': 'nats', 'rpc.service': ctx.service, 'rpc.method': ctx.method };
  const reply = await withSpan(
    `${ctx.service}/${ctx.method}`,
    { kind: SpanKind.SERVER, parent, attributes, service: ctx.service, record: ctx.traced },
    (span) => handleInSpan(ctx, msg, span),
  );
  respond(ctx, msg, reply);
  if (ctx.replyAtOnce) flushNow(ctx.nc);
}

/**
 * Registers a service with the NATS services API: one endpoint per method on
 * `ars.rpc.<service>.<method>`, all in the queue group `<service>` so that
 * replicas share the load; `$SRV.PING/INFO/STATS` answer for it. Each request
 * runs in a SERVER span whose parent is the caller's `traceparent`.
 */
export async function serveService(bus: Bus, options: ServeOptions): Promise<ServedService> {
  const { service, logger } = options;
  const srv: Service = await new Svcm(bus.nc).add({
    name: service,
    version: options.version,
    queue: service,
    description: options.description ?? service,
    metadata: { ...options.metadata, instance_id: options.instanceId },
  });
  for (const [method, handler] of Object.entries(options.handlers)) {
    const traced = options.untracedMethods?.includes(method) !== true;
    const ctx: EndpointContext = {
      service,
      method,
      handler,
      logger,
      traced,
      nc: bus.nc,
      replyAtOnce: isPublicMethod(method),
    };
    srv.addEndpoint(endpointName(method), {
      subject: rpcSubject(service, method),
      metadata: { ...options.endpointMetadata?.[method], method },
      handler: (err, msg) => {
        if (err !== null) {
          logger.error({ err, method }, 'rpc endpoint failed');
          return;
        }
        handle(ctx, msg).catch((error: unknown) => logger.error({ err: error, method }, 'rpc request handling failed'));
      },
    });
  }
  await bus.nc.flush();
  void srv.stopped.then((error) => {
    if (error !== null) logger.error({ err: error, service }, 'service stopped on an error');
  });
  logger.info({ service, id: srv.info().id, methods: Object.keys(options.handlers).length }, 'service registered');
  return {
    id: srv.info().id,
    async stop(): Promise<void> {
      await srv.stop();
    },
  };
}
