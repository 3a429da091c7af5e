import { ServiceError, findRoute, isServiceError } from '@ars/contracts';
import type { IdentityScope, MethodDef, VerifiedIdentity } from '@ars/contracts';
import { canFanIn, reconcileBodyIdentity } from '@ars/auth';
import { SpanKind, context, extractTraceContext, startSpan, trace } from '@ars/telemetry';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { streamArtifact, StreamedJson } from '../artifacts/artifact-download.ts';
import type { ArtifactUploadContext } from '../artifacts/artifact-upload.ts';
import { ROTATE_TOKEN_METHOD, rotateToken } from '../auth/rotate-token.ts';
import type { RotationContext } from '../auth/rotate-token.ts';
import { authenticate } from '../http/authenticate.ts';
import type { Authenticated, Authenticator } from '../http/authenticate.ts';
import { authorizeMethod } from '../http/authorize.ts';
import { sendError, sentErrorCode } from '../http/errors.ts';
import { parseJsonObject, validateRequest } from '../http/request-body.ts';
import type { EventStream } from '../events/event-stream.ts';
import type { StreamAuthority } from '../events/stream-authority.ts';
import { streamFilter } from '../events/stream-filter.ts';
import { subscribeRequestBody } from '../events/subscribe-request.ts';
import type { HttpCounters, LocalHandler } from '../local/index.ts';
import { MethodMetrics } from '../metrics/gateway-metrics.ts';
import { unimplemented } from '../local/index.ts';
import type { EventSink, RpcCaller } from '../ports.ts';
import { artifactPutRoutes } from './artifact-put.routes.ts';
import { forwardedBody, gateBody } from './method-gate.ts';
import { endSpan, routedState, sendResult, withProtocolVersion } from './route-state.ts';
import type { Routed } from './route-state.ts';

/** What the registry routes need. */
export interface MethodsRoutesOptions {
  readonly authenticator: Authenticator;
  readonly rpc: RpcCaller;
  readonly events: EventSink;
  readonly localHandlers: Readonly<Record<string, LocalHandler>>;
  readonly counters: HttpCounters;
  /** Serves `GET /v1/events`. */
  readonly stream: EventStream;
  /** auth.rotate_token, served here for its registry owner (governance). */
  readonly rotation: RotationContext;
  /** artifacts.put bodies and large artifacts.get answers. */
  readonly artifacts: ArtifactUploadContext;
}

/** The one method answered with `text/event-stream`. */
const EVENTS_SUBSCRIBE = 'events.subscribe';
const ARTIFACTS_GET = 'artifacts.get';

/** Response headers of the event stream: no caching, no proxy buffering. */
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

function pathOf(url: string): string {
  return url.split('?', 1)[0] ?? url;
}

function singleHeader(request: FastifyRequest, key: string): string | undefined {
  const value = request.headers[key];
  return Array.isArray(value) ? value[0] : value;
}

/** What closes a stream opened by `auth`: its expiry, with the verifier's tolerance, and its revocation. */
function streamAuthority(authenticator: Authenticator, auth: Authenticated): StreamAuthority {
  const { claims } = auth;
  return {
    ...(claims.exp === undefined ? {} : { refusedFromMs: (claims.exp + authenticator.clockToleranceSeconds) * 1000 }),
    onRevoked: (listener) => authenticator.revocations.onRevoked(auth.revocationKeys, listener),
    token: { kid: claims.kid ?? '', issuer: claims.iss ?? '', subject: claims.sub ?? '' },
  };
}

/**
 * Every registry method under `/v1/`. Order of the pipeline: route lookup
 * (404 `unknown_method`), verb (bare 405), authentication and revocation
 * (401), then in the handler: the method's claims (403), JSON body (400),
 * the body gate (see `gateBody`), dispatch: a gateway-owned method locally, auth.rotate_token at
 * the edge, anything else over NATS to its owner.
 */
export async function methodsRoutes(app: FastifyInstance, options: MethodsRoutesOptions): Promise<void> {
  const routed = new WeakMap<FastifyRequest, Routed>();
  const methodMetrics = new MethodMetrics();

  // Bodies are parsed by the pipeline, after authentication, whatever their type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.addHook('onRequest', async (request, reply) => {
    const path = pathOf(request.url);
    const parent = extractTraceContext((key) => singleHeader(request, key));
    // No span is recorded while nothing exports spans: the caller's trace (or a fresh one) still travels.
    const span = startSpan(`${request.method} /v1/*`, { kind: SpanKind.SERVER, parent, service: 'gateway' });
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
    state.auth = await authenticate(options.authenticator, request.headers);
    return undefined;
  });

  app.addHook('onResponse', async (request, reply) => {
    const state = routed.get(request);
    options.counters.record(
      state?.method?.name ?? '(unknown)',
      reply.statusCode,
      reply.elapsedTime,
      state?.auth?.identity.tenant,
    );
    methodMetrics.record({
      method: state?.method,
      httpMethod: request.method,
      status: reply.statusCode,
      code: sentErrorCode(request),
      seconds: reply.elapsedTime / 1000,
    });
    endSpan(state, reply.statusCode);
  });

  app.addHook('onRequestAbort', async (request) => {
    endSpan(routed.get(request));
  });

  /** artifacts.get of bytes too large for one bus reply: streamed from the object store instead. */
  const getArtifact = async (verified: VerifiedIdentity, body: Record<string, unknown>) => {
    try {
      return await options.rpc.call('artifact', ARTIFACTS_GET, verified, body);
    } catch (error) {
      const blobs = options.artifacts.blobs;
      const large = isServiceError(error) && error.code === 'payload_too_large';
      if (!large || body.include_content === false || blobs === undefined) throw error;
      return streamArtifact({ rpc: options.rpc, blobs }, verified, {
        identity: body.identity,
        artifact_id: body.artifact_id,
      });
    }
  };

  const dispatch = async (method: MethodDef, auth: Authenticated, body: Record<string, unknown>) => {
    const verified = auth.identity;
    if (method.name === ROTATE_TOKEN_METHOD) {
      return rotateToken(options.rotation, { verified, token: auth.token, claims: auth.claims, body });
    }
    if (method.name === ARTIFACTS_GET) return getArtifact(verified, body);
    if (method.service !== 'gateway') return options.rpc.call(method.service, method.name, verified, body);
    const local = options.localHandlers[method.name];
    if (local === undefined) throw unimplemented(method.name);
    return local({ method: method.name, identity: verified, body });
  };

  /** The JSON body; one that does not parse is refused 400 only to a caller the method's claims admit. */
  const parseBody = (request: FastifyRequest, method: MethodDef, auth: Authenticated): Record<string, unknown> => {
    if (method.httpMethod === 'GET') return {};
    try {
      return parseJsonObject(request.body, request.headers['content-type']);
    } catch (error) {
      authorizeMethod(method, auth.identity);
      throw error;
    }
  };

  const pipeline = async (request: FastifyRequest, method: MethodDef, auth: Authenticated) => {
    const body = parseBody(request, method, auth);
    const identity = await gateBody(options.events, request.log, method, auth.identity, body);
    const result = await dispatch(method, auth, forwardedBody(method, body, identity));
    return result instanceof StreamedJson ? result : withProtocolVersion(method, result ?? {});
  };

  /**
   * `GET /v1/events`: the same gate as every method (inputs gathered from the
   * headers and the query, schema, identity, claims), then `admin=1` needs
   * admin or console:fleet (403 `scope_mismatch`). Refusals are JSON
   * envelopes; once accepted the response is hijacked and streamed, and it is
   * ended, with a last `auth.rejected` frame, when its token expires (its
   * `exp` plus the verifier's clock tolerance) or gets revoked.
   */
  const subscribe = async (request: FastifyRequest, reply: FastifyReply, method: MethodDef, auth: Authenticated) => {
    const verified = auth.identity;
    authorizeMethod(method, verified);
    const body = subscribeRequestBody(request.headers, request.query);
    validateRequest(method, body);
    reconcileBodyIdentity({ verified, body: body.identity as IdentityScope, method });
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
      authority: streamAuthority(options.authenticator, auth),
    });
  };

  void app.register(artifactPutRoutes, {
    routed,
    events: options.events,
    rpc: options.rpc,
    artifacts: options.artifacts,
  });

  app.all('/v1/*', async (request: FastifyRequest, reply: FastifyReply) => {
    const { state, method, auth } = routedState(routed, request);
    return context.with(state.context, async () => {
      try {
        if (method.name === EVENTS_SUBSCRIBE) {
          await subscribe(request, reply, method, auth);
          return reply;
        }
        const result = await pipeline(request, method, auth);
        if (method.name === ROTATE_TOKEN_METHOD) reply.header('cache-control', 'no-store');
        return sendResult(reply, result);
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
