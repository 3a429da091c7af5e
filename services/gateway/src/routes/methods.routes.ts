import { PROTOCOL_VERSION, ServiceError, findRoute } from '@ars/contracts';
import type { IdentityScope, MethodDef, VerifiedIdentity } from '@ars/contracts';
import { canFanIn, reconcileBodyIdentity } from '@ars/auth';
import { SpanKind, SpanStatusCode, context, extractTraceContext, trace } from '@ars/telemetry';
import type { Context, Span } from '@ars/telemetry';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { publishCrossings, publishSearchCrossing } from '../http/audit.ts';
import { authenticate } from '../http/authenticate.ts';
import { authorizeMethod } from '../http/authorize.ts';
import { sendError } from '../http/errors.ts';
import { enforcePayloadBounds, parseJsonObject, validateRequest } from '../http/request-body.ts';
import { checkSearchFilter } from '../http/search-filter.ts';
import type { EventStream } from '../events/event-stream.ts';
import { streamFilter } from '../events/stream-filter.ts';
import { subscribeRequestBody } from '../events/subscribe-request.ts';
import type { HttpCounters, LocalHandler } from '../local/index.ts';
import { unimplemented } from '../local/index.ts';
import type { EventSink, RpcCaller, TokenVerifier } from '../ports.ts';

/** What the registry routes need. */
export interface MethodsRoutesOptions {
  readonly verifier: TokenVerifier;
  readonly rpc: RpcCaller;
  readonly events: EventSink;
  readonly localHandlers: Readonly<Record<string, LocalHandler>>;
  readonly counters: HttpCounters;
  /** Serves `GET /v1/events`. */
  readonly stream: EventStream;
}

/** The one method answered with `text/event-stream`. */
const EVENTS_SUBSCRIBE = 'events.subscribe';

/** Response headers of the event stream: no caching, no proxy buffering. */
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/** Per-request state from the onRequest stage to the handler. */
interface Routed {
  readonly span: Span;
  readonly context: Context;
  method?: MethodDef;
  identity?: VerifiedIdentity;
  ended?: boolean;
}

/** Ends the request span once, whichever of response or abort comes first. */
function endSpan(state: Routed | undefined, status?: number): void {
  if (state === undefined || state.ended === true) return;
  state.ended = true;
  if (status !== undefined) {
    state.span.setAttribute('http.response.status_code', status);
    if (status >= 500) state.span.setStatus({ code: SpanStatusCode.ERROR });
  }
  state.span.end();
}

/**
 * Looked up per request, never cached at import: a tracer taken before
 * telemetry registers its provider would stay a no-op.
 */
const tracer = () => trace.getTracer('@ars/gateway');

function pathOf(url: string): string {
  return url.split('?', 1)[0] ?? url;
}

function singleHeader(request: FastifyRequest, key: string): string | undefined {
  const value = request.headers[key];
  return Array.isArray(value) ? value[0] : value;
}

function withProtocolVersion(method: MethodDef, result: unknown): unknown {
  if (method.surface !== 'control' || result === null || typeof result !== 'object' || Array.isArray(result)) {
    return result;
  }
  return { ...result, protocol_version: PROTOCOL_VERSION };
}

/**
 * Every registry method under `/v1/`. Order of the pipeline: route lookup
 * (404 `unknown_method`), verb (bare 405), authentication (401), then in the
 * handler: JSON body (400), control payload bounds (422), request schema
 * (400), body identity reconciliation (401/403/404), method claims (403),
 * search filter folding (403), audit of granted crossings, dispatch (local
 * or over NATS).
 */
export async function methodsRoutes(app: FastifyInstance, options: MethodsRoutesOptions): Promise<void> {
  const routed = new WeakMap<FastifyRequest, Routed>();

  // Bodies are parsed by the pipeline, after authentication, whatever their type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.addHook('onRequest', async (request, reply) => {
    const path = pathOf(request.url);
    const parent = extractTraceContext((key) => singleHeader(request, key));
    const span = tracer().startSpan(`${request.method} /v1/*`, { kind: SpanKind.SERVER }, parent);
    span.setAttributes({ 'http.request.method': request.method, 'url.path': path });
    const state: Routed = { span, context: trace.setSpan(parent, span) };
    routed.set(request, state);

    const method = findRoute(path);
    if (method === undefined) throw new ServiceError('unknown_method', `no method is served at ${path}`);
    state.method = method;
    span.updateName(`${request.method} ${path}`);
    span.setAttribute('ars.method', method.name);
    if (request.method !== method.httpMethod) {
      return reply.code(405).header('allow', method.httpMethod).send();
    }
    state.identity = await authenticate(options.verifier, request.headers);
    return undefined;
  });

  app.addHook('onResponse', async (request, reply) => {
    const state = routed.get(request);
    options.counters.record(state?.method?.name ?? '(unknown)', reply.statusCode, reply.elapsedTime);
    endSpan(state, reply.statusCode);
  });

  app.addHook('onRequestAbort', async (request) => {
    endSpan(routed.get(request));
  });

  const dispatch = async (method: MethodDef, identity: VerifiedIdentity, body: Record<string, unknown>) => {
    if (method.service !== 'gateway') return options.rpc.call(method.service, method.name, identity, body);
    const local = options.localHandlers[method.name];
    if (local === undefined) throw unimplemented(method.name);
    return local({ method: method.name, identity, body });
  };

  const pipeline = async (request: FastifyRequest, method: MethodDef, verified: VerifiedIdentity) => {
    const body = method.httpMethod === 'GET' ? {} : parseJsonObject(request.body, request.headers['content-type']);
    enforcePayloadBounds(method, body);
    if (method.httpMethod !== 'GET') validateRequest(method, body);
    const { identity, crossed } = reconcileBodyIdentity({
      verified,
      body: body.identity as IdentityScope | undefined,
      method,
    });
    authorizeMethod(method, verified);
    const searchCrossing = checkSearchFilter(method, verified, body);
    if (crossed.length > 0) {
      await publishCrossings(options.events, request.log, { method, verified, target: identity, crossed });
    }
    if (searchCrossing !== undefined) {
      await publishSearchCrossing(options.events, request.log, {
        method,
        verified,
        run: identity.run,
        filter: searchCrossing,
      });
    }
    const result = await dispatch(method, verified, { ...body, identity });
    return withProtocolVersion(method, result ?? {});
  };

  /**
   * `GET /v1/events`: the same gate as every method (inputs gathered from the
   * headers and the query, schema, identity, claims), then `admin=1` needs
   * admin or console:fleet (403 `scope_mismatch`). Refusals are JSON
   * envelopes; once accepted the response is hijacked and streamed.
   */
  const subscribe = async (
    request: FastifyRequest,
    reply: FastifyReply,
    method: MethodDef,
    verified: VerifiedIdentity,
  ) => {
    const body = subscribeRequestBody(request.headers, request.query);
    validateRequest(method, body);
    reconcileBodyIdentity({ verified, body: body.identity as IdentityScope, method });
    authorizeMethod(method, verified);
    const admin = body.admin === true;
    if (admin && !canFanIn(verified.scopes, 'admin_or_fleet')) {
      throw new ServiceError('scope_mismatch', 'admin=1 (cross-tenant fan-in) needs admin or console:fleet');
    }
    const filter = streamFilter({
      triple: admin ? undefined : verified,
      run: body.run as string | undefined,
      types: body.types as string[] | undefined,
    });
    reply.hijack();
    reply.raw.writeHead(200, SSE_HEADERS);
    reply.raw.flushHeaders();
    await options.stream.serve(reply.raw, {
      identity: verified,
      filter,
      admin,
      lastEventId: body.last_event_id as number | undefined,
    });
  };

  app.all('/v1/*', async (request: FastifyRequest, reply: FastifyReply) => {
    const state = routed.get(request);
    const method = state?.method;
    const verified = state?.identity;
    if (state === undefined || method === undefined || verified === undefined) {
      throw new ServiceError('internal', 'request reached the handler without routing');
    }
    return context.with(state.context, async () => {
      try {
        if (method.name === EVENTS_SUBSCRIBE) {
          await subscribe(request, reply, method, verified);
          return reply;
        }
        const result = await pipeline(request, method, verified);
        return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(result));
      } catch (error) {
        if (reply.raw.headersSent) {
          request.log.error({ err: error }, 'event stream failed after its headers were sent');
          reply.raw.destroy();
          return reply;
        }
        return sendError(request, reply, error);
      }
    });
  });
}
