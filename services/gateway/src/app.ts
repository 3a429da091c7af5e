import { DEFAULT_CLOCK_TOLERANCE_SECONDS } from '@ars/auth';
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { RevocationList } from './auth/revocation-list.ts';
import { createRejectionReporter } from './auth/rejection-events.ts';
import { consoleRoutes } from './console/console.routes.ts';
import { EventHub } from './events/event-hub.ts';
import { EventStream } from './events/event-stream.ts';
import { createClientErrorHandler } from './http/client-error.ts';
import { installErrorEnvelope, sendFrameworkError } from './http/errors.ts';
import { loggableUrl } from './http/loggable-url.ts';
import { installUnreadBodyPolicy } from './http/unread-body.ts';
import { HttpCounters, LOCAL_METHODS, createCapabilitySource, createLocalHandlers } from './local/index.ts';
import type { LocalHandler } from './local/index.ts';
import type { GatewayDeps } from './ports.ts';
import { devRoutes } from './routes/dev.routes.ts';
import { methodsRoutes } from './routes/methods.routes.ts';
import { oauthCallbackRoutes } from './routes/oauth-callback.routes.ts';
import { opsRoutes } from './routes/ops.routes.ts';

/** The built gateway: the fastify instance plus the handlers it answers locally (also served on NATS). */
export interface GatewayApp {
  readonly app: FastifyInstance;
  readonly localHandlers: Readonly<Record<string, LocalHandler>>;
  /** The live fan-out of `GET /v1/events`; started when the app is ready, stopped when it closes. */
  readonly hub: EventHub;
}

const DEFAULT_BODY_LIMIT = 1_048_576;
/** Room for ARTIFACT_MAX_BYTES (64 MiB) as base64 (≈ 85.4 MiB) plus the JSON around it. */
export const DEFAULT_ARTIFACT_BODY_LIMIT = 90 * 1_048_576;
/** The bytes whose base64 fits one 1 MiB bus message with 16 KiB to spare (the artifact service's inline limit). */
export const DEFAULT_INLINE_ARTIFACT_BYTES = Math.floor((1_048_576 - 16 * 1024) / 4) * 3;
const DEFAULT_SEARCH_SOURCE_TIMEOUT_MS = 5_000;
const DEFAULT_REVOCATION_DELIVERY_WAIT_MS = 2_000;
const DEFAULT_DEV_TOKEN_TTL = 43_200;
const DEFAULT_CAPABILITIES_CACHE_MS = 2_000;
/** `_oauth.complete` exchanges a code with an authorization server: room for its token endpoint. */
const DEFAULT_OAUTH_CALLBACK_TIMEOUT_MS = 15_000;
/** Event stream defaults (see `EventLimits`). */
export const EVENT_DEFAULTS = {
  heartbeatMs: 15_000,
  idleCloseMs: 0,
  subscriberBufferBytes: 1_048_576,
  scanLimit: 200_000,
  replayRetryMs: 60_000,
} as const;

/**
 * Builds the gateway's HTTP application from its collaborators. Never
 * listens: `main.ts` does, tests use `inject()`.
 */
export function buildGateway(deps: GatewayDeps): GatewayApp {
  const now = deps.now ?? (() => performance.now());
  const startedAt = now();
  const counters = new HttpCounters();
  const capabilities = createCapabilitySource({
    discovery: deps.discovery,
    localMethods: new Set(LOCAL_METHODS),
    ttlMs: deps.limits?.capabilitiesCacheMs ?? DEFAULT_CAPABILITIES_CACHE_MS,
    now,
    logger: deps.logger,
  });
  const eventLimits = { ...EVENT_DEFAULTS, ...deps.limits?.events };
  const localHandlers = createLocalHandlers({
    build: deps.build,
    bus: deps.bus,
    discovery: deps.discovery,
    capabilities,
    counters,
    instanceId: deps.build.instanceId,
    clock: () => new Date(),
    now,
    startedAt,
    eventLog: deps.eventLog,
    events: deps.events,
    logger: deps.logger,
    scanLimit: eventLimits.scanLimit,
    rpc: deps.rpc,
    timeoutMs: deps.limits?.searchSourceTimeoutMs ?? DEFAULT_SEARCH_SOURCE_TIMEOUT_MS,
  });
  const revocations = deps.revocations ?? new RevocationList({ logger: deps.logger });
  const bodyLimit = deps.limits?.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
  const hub = new EventHub({
    log: deps.eventLog,
    logger: deps.logger,
    heartbeatMs: eventLimits.heartbeatMs,
    idleCloseMs: eventLimits.idleCloseMs,
    maxBufferedBytes: eventLimits.subscriberBufferBytes,
  });
  const stream = new EventStream({
    hub,
    log: deps.eventLog,
    events: deps.events,
    logger: deps.logger,
    replayRetryMs: eventLimits.replayRetryMs,
  });

  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per response is logged below; fastify's own request lines are off.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    return503OnClosing: true,
    // What node's parser and fastify's router refuse is answered in the envelope too.
    clientErrorHandler: createClientErrorHandler(deps.logger as FastifyBaseLogger),
    frameworkErrors: sendFrameworkError,
  });
  installErrorEnvelope(app);
  installUnreadBodyPolicy(app);
  app.addHook('onReady', () => hub.start());
  // Open event streams would keep the server from closing: end them first.
  app.addHook('preClose', () => hub.stop());
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        url: loggableUrl(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request completed',
    );
  });

  void app.register(consoleRoutes, deps.consoleDir === undefined ? {} : { distDir: deps.consoleDir });
  void app.register(opsRoutes, { bus: deps.bus, authenticator: { verifier: deps.verifier, revocations } });
  void app.register(oauthCallbackRoutes, {
    rpc: deps.rpc,
    timeoutMs: deps.limits?.oauthCallbackTimeoutMs ?? DEFAULT_OAUTH_CALLBACK_TIMEOUT_MS,
  });
  void app.register(methodsRoutes, {
    authenticator: {
      verifier: deps.verifier,
      clockToleranceSeconds: deps.limits?.tokenClockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS,
      revocations,
      rejections: createRejectionReporter({ events: deps.events, logger: deps.logger }),
    },
    rpc: deps.rpc,
    events: deps.events,
    localHandlers,
    counters,
    stream,
    rotation: {
      minter: deps.tokenMinter,
      rpc: deps.rpc,
      revocations,
      logger: deps.logger,
      deliveryWaitMs: deps.limits?.revocationDeliveryWaitMs ?? DEFAULT_REVOCATION_DELIVERY_WAIT_MS,
    },
    artifacts: {
      rpc: deps.rpc,
      blobs: deps.blobs,
      inlineBytes: deps.limits?.inlineArtifactBytes ?? DEFAULT_INLINE_ARTIFACT_BYTES,
      bodyLimitBytes: deps.limits?.artifactBodyLimitBytes ?? DEFAULT_ARTIFACT_BODY_LIMIT,
      restLimit: bodyLimit,
      logger: deps.logger,
    },
  });
  if (deps.devIssuer !== undefined) {
    void app.register(devRoutes, {
      issuer: deps.devIssuer,
      ttlSeconds: deps.limits?.devTokenTtlSeconds ?? DEFAULT_DEV_TOKEN_TTL,
    });
  }
  return { app, localHandlers, hub };
}

/** Builds the gateway's fastify instance (see {@link buildGateway}). */
export function buildApp(deps: GatewayDeps): FastifyInstance {
  return buildGateway(deps).app;
}
