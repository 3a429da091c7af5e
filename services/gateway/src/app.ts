import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { installErrorEnvelope } from './http/errors.ts';
import { HttpCounters, LOCAL_METHODS, createCapabilitySource, createLocalHandlers } from './local/index.ts';
import type { LocalHandler } from './local/index.ts';
import type { GatewayDeps } from './ports.ts';
import { devRoutes } from './routes/dev.routes.ts';
import { methodsRoutes } from './routes/methods.routes.ts';
import { opsRoutes } from './routes/ops.routes.ts';

/** The built gateway: the fastify instance plus the handlers it answers locally (also served on NATS). */
export interface GatewayApp {
  readonly app: FastifyInstance;
  readonly localHandlers: Readonly<Record<string, LocalHandler>>;
}

const DEFAULT_BODY_LIMIT = 1_048_576;
const DEFAULT_DEV_TOKEN_TTL = 43_200;
const DEFAULT_CAPABILITIES_CACHE_MS = 2_000;

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
  });

  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per response is logged below; fastify's own request lines are off.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.limits?.bodyLimitBytes ?? DEFAULT_BODY_LIMIT,
    return503OnClosing: true,
  });
  installErrorEnvelope(app);
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request completed',
    );
  });

  void app.register(opsRoutes, { bus: deps.bus });
  void app.register(methodsRoutes, {
    verifier: deps.verifier,
    rpc: deps.rpc,
    events: deps.events,
    localHandlers,
    counters,
  });
  if (deps.devIssuer !== undefined) {
    void app.register(devRoutes, {
      issuer: deps.devIssuer,
      ttlSeconds: deps.limits?.devTokenTtlSeconds ?? DEFAULT_DEV_TOKEN_TTL,
    });
  }
  return { app, localHandlers };
}

/** Builds the gateway's fastify instance (see {@link buildGateway}). */
export function buildApp(deps: GatewayDeps): FastifyInstance {
  return buildGateway(deps).app;
}
