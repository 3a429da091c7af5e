import { PROTOCOL_VERSION, ServiceError, findRoute } from '@ars/contracts';
import type { IdentityScope, MethodDef, VerifiedIdentity } from '@ars/contracts';
import { reconcileBodyIdentity } from '@ars/auth';
import { SpanKind, SpanStatusCode, context, extractTraceContext, trace } from '@ars/telemetry';
import type { Context, Span } from '@ars/telemetry';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { publishCrossings, publishSearchCrossing } from '../http/audit.ts';
import { authenticate } from '../http/authenticate.ts';
import { authorizeMethod } from '../http/authorize.ts';
import { sendError } from '../http/errors.ts';
import { enforcePayloadBounds, parseJsonObject, validateRequest } from '../http/request-body.ts';
import { checkSearchFilter } from '../http/search-filter.ts';
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
}

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

  app.all('/v1/*', async (request: FastifyRequest, reply: FastifyReply) => {
    const state = routed.get(request);
    const method = state?.method;
    const verified = state?.identity;
    if (state === undefined || method === undefined || verified === undefined) {
      throw new ServiceError('internal', 'request reached the handler without routing');
    }
    return context.with(state.context, async () => {
      try {
        const result = await pipeline(request, method, verified);
        return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(result));
      } catch (error) {
        return sendError(request, reply, error);
      }
    });
  });
}
