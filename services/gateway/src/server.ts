import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import {
  REVOCATIONS_BUCKET,
  connectBus,
  createEventPublisher,
  createRpcClient,
  ensureInfrastructure,
  eventStreamBounds,
  nextStoredEvent,
  openKv,
  readEvents,
  serveService,
  tailEvents,
} from '@ars/bus';
import type { Bus, RpcHandler, ServedService } from '@ars/bus';
import {
  cacheVerifications,
  createDevIssuer,
  createTokenIssuer,
  createTokenVerifier,
  DEV_DEFAULT_IDENTITY,
} from '@ars/auth';
import type { TokenIssuer } from '@ars/auth';
import { METHODS } from '@ars/contracts';
import { telemetryOptionsOf } from '@ars/service-kit/config';
import { createLogger, initMetrics, initTelemetry, reportTelemetryProblems } from '@ars/telemetry';
import type { Logger, Metrics, SpanExporter, Telemetry } from '@ars/telemetry';
import type { FastifyInstance } from 'fastify';
import { buildGateway } from './app.ts';
import { createBusBlobs } from './artifacts/bus-blobs.ts';
import { RevocationList } from './auth/revocation-list.ts';
import { routeByKid } from './auth/verifier-router.ts';
import type { GatewayConfig } from './config.ts';
import { HEALTH_METHOD, connectedOnly, createBusDiscovery, trackBusState } from './discovery/bus-discovery.ts';
import { startTopologyWatch } from './discovery/topology-watch.ts';
import { gatewayEndpoints } from './local/index.ts';
import type { LocalHandler } from './local/index.ts';
import type { BusState, DevTokenMinter, EventLog, TokenMinter, TokenVerifier } from './ports.ts';

/** The gateway's release, reported in discovery. */
const SERVICE_VERSION = '0.1.0';

/** Knobs for tests and embedding; `main.ts` passes none. */
export interface GatewayOverrides {
  readonly logger?: Logger;
  readonly spanExporter?: SpanExporter;
}

/** A booted gateway: the app (not yet listening), the dev token in dev mode, and a graceful stop. */
export interface GatewayRuntime {
  readonly app: FastifyInstance;
  /** The default admin token; dev mode only. */
  readonly devToken?: string;
  /** Closes fastify, stops serving on NATS, drains the bus, flushes telemetry. Idempotent. */
  stop(): Promise<void>;
}

/** `BUILD_COMMIT`, else `git rev-parse HEAD` of the working directory, else `unknown`. */
export function resolveBuildCommit(configured: string | undefined): string {
  if (configured !== undefined) return configured;
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2000,
    }).trim();
  } catch {
    return 'unknown';
  }
}

interface Auth {
  readonly verifier: TokenVerifier;
  readonly devIssuer?: DevTokenMinter;
  readonly devToken?: string;
  /** Mints rotated tokens: the dev issuer, or the production rotation key when configured. */
  readonly tokenMinter?: TokenMinter;
}

/** The production rotation key (`ARS_ROTATION_SIGNING_KEY_FILE`): PKCS#8 PEM or a private JWK as JSON. */
async function rotationIssuer(config: GatewayConfig): Promise<TokenIssuer | undefined> {
  const file = config.ARS_ROTATION_SIGNING_KEY_FILE;
  if (file === undefined) return undefined;
  const text = (await readFile(file, 'utf8')).trim();
  return createTokenIssuer({
    issuer: config.ARS_ROTATION_ISSUER,
    audience: config.ARS_AUTH_AUDIENCE!,
    signingKey: text.startsWith('{') ? (JSON.parse(text) as Record<string, string>) : text,
    ...(config.ARS_ROTATION_KEY_ID === undefined ? {} : { kid: config.ARS_ROTATION_KEY_ID }),
  });
}

async function createAuth(config: GatewayConfig): Promise<Auth> {
  if (config.ARS_AUTH_MODE === 'production') {
    const provider = createTokenVerifier({
      issuer: config.ARS_AUTH_ISSUER!,
      audience: config.ARS_AUTH_AUDIENCE!,
      jwksUrl: config.ARS_AUTH_JWKS_URL!,
      ...(config.ARS_AUTH_ALGORITHMS === undefined ? {} : { algorithms: config.ARS_AUTH_ALGORITHMS }),
    });
    const rotation = await rotationIssuer(config);
    if (rotation === undefined) return { verifier: cacheVerifications(provider) };
    return {
      verifier: cacheVerifications(routeByKid(provider, { kid: rotation.kid, verifier: rotation.verifier })),
      tokenMinter: rotation,
    };
  }
  const issuer = await createDevIssuer();
  const devToken = await issuer.mint({ ...DEV_DEFAULT_IDENTITY, ttlSeconds: config.ARS_DEV_TOKEN_TTL_SECONDS });
  return { verifier: cacheVerifications(issuer.verifier), devIssuer: issuer, devToken, tokenMinter: issuer };
}

/** Bytes whose base64 fits one bus message of `maxPayload` bytes with 16 KiB to spare. */
function inlineArtifactBytes(maxPayload: number): number {
  return Math.max(0, Math.floor((maxPayload - 16 * 1024) / 4) * 3);
}

function healthHandler(config: GatewayConfig, bus: Bus, state: BusState, startedAt: number): RpcHandler {
  return async () => {
    const nats = state.isConnected()
      ? await bus.nc.flush().then(
          () => 'ok' as const,
          () => 'failed' as const,
        )
      : 'failed';
    return {
      service: 'gateway',
      instance_id: config.INSTANCE_ID,
      version: SERVICE_VERSION,
      status: nats === 'ok' ? 'ok' : 'degraded',
      checks: { nats },
      uptime_seconds: Math.floor((performance.now() - startedAt) / 1000),
    };
  };
}

/** The gateway's gauges: its NATS connection, and the open event-stream subscriptions. */
function observeGateway(metrics: Metrics, state: BusState, hub: { readonly size: number }): void {
  metrics.gauge(
    'ars.nats.connected',
    { description: 'Whether the service is connected to NATS: 1 connected, 0 not (reconnecting or closed)', unit: '1' },
    (result) => result.observe(state.isConnected() ? 1 : 0, metrics.service),
  );
  metrics.gauge(
    'ars.gateway.sse.subscribers',
    { description: 'Open event-stream (SSE) subscriptions of this gateway', unit: '{subscription}' },
    (result) => result.observe(hub.size, metrics.service),
  );
}

/** The EVENTS stream through `@ars/bus`. */
function busEventLog(bus: Bus): EventLog {
  return {
    bounds: () => eventStreamBounds(bus),
    // The scans confirm their ends with the leader themselves (`scanForward`), paging included.
    read: (options) => readEvents(bus, { ...options, confirmEnd: false }),
    nextStored: async (options) => (await nextStoredEvent(bus, options.filterSubject, options.fromSequence))?.seq,
    tail: (options) => tailEvents(bus, options),
  };
}

/** Registers the gateway's own methods (local or `unimplemented`) and `_health` with the services API. */
async function serveGateway(
  config: GatewayConfig,
  bus: Bus,
  state: BusState,
  localHandlers: Readonly<Record<string, LocalHandler>>,
  logger: Logger,
  startedAt: number,
): Promise<ServedService> {
  const handlers: Record<string, RpcHandler> = {};
  const endpointMetadata: Record<string, Record<string, string>> = {};
  for (const endpoint of gatewayEndpoints(METHODS, localHandlers)) {
    handlers[endpoint.method] = endpoint.handler;
    endpointMetadata[endpoint.method] = { method: endpoint.method, implemented: String(endpoint.implemented) };
  }
  handlers[HEALTH_METHOD] = healthHandler(config, bus, state, startedAt);
  endpointMetadata[HEALTH_METHOD] = { method: HEALTH_METHOD, implemented: 'true' };
  return serveService(bus, {
    service: 'gateway',
    version: SERVICE_VERSION,
    instanceId: config.INSTANCE_ID,
    description: 'Agent Run Service: gateway',
    handlers,
    endpointMetadata,
    metadata: { instance_id: config.INSTANCE_ID, build_version: config.BUILD_VERSION },
    logger,
  });
}

/**
 * Boots everything but the listener: telemetry → logger → bus →
 * infrastructure → dev issuer or production verifier → app → serving the
 * gateway's own endpoints on NATS. A failure closes what was opened.
 */
export async function startGateway(config: GatewayConfig, overrides: GatewayOverrides = {}): Promise<GatewayRuntime> {
  const startedAt = performance.now();
  const options = telemetryOptionsOf(config, {
    serviceName: 'gateway',
    version: config.BUILD_VERSION,
    instanceId: config.INSTANCE_ID,
  });
  const telemetry: Telemetry = initTelemetry({
    ...options.tracing,
    ...(overrides.spanExporter === undefined ? {} : { exporter: overrides.spanExporter }),
  });
  const metrics = initMetrics(options.metrics);
  const logger = (overrides.logger ?? createLogger({ name: 'gateway', level: config.LOG_LEVEL })).child({
    instance_id: config.INSTANCE_ID,
  });
  // A failed span or metric export is logged, not lost in silence (the one process: the first installs it).
  reportTelemetryProblems(logger);
  let bus: Bus | undefined;
  let revocations: RevocationList | undefined;
  try {
    const servers = config.NATS_URL.split(',').map((url) => url.trim());
    bus = await connectBus({ servers, name: config.INSTANCE_ID, logger });
    await ensureInfrastructure(bus, {
      eventsMaxAgeMs: config.ARS_EVENTS_MAX_AGE_SECONDS * 1000,
      eventsMaxBytes: config.ARS_EVENTS_MAX_BYTES,
      replicas: config.JETSTREAM_REPLICAS,
      logger,
    });
    const auth = await createAuth(config);
    const state = trackBusState(bus);
    const rpc = connectedOnly(createRpcClient(bus, { timeoutMs: config.ARS_RPC_TIMEOUT_MS, sendAtOnce: true }), state);
    const events = createEventPublisher(bus, { source: 'gateway', logger });
    const discovery = createBusDiscovery(bus, rpc, { timeoutMs: config.ARS_DISCOVERY_TIMEOUT_MS });
    const watched = new RevocationList({ kv: await openKv(bus, REVOCATIONS_BUCKET), logger });
    revocations = watched;
    watched.start();
    const { app, localHandlers, hub } = buildGateway({
      logger,
      verifier: auth.verifier,
      ...(auth.devIssuer === undefined ? {} : { devIssuer: auth.devIssuer }),
      ...(auth.tokenMinter === undefined ? {} : { tokenMinter: auth.tokenMinter }),
      revocations: watched,
      blobs: createBusBlobs(bus),
      rpc,
      events,
      eventLog: busEventLog(bus),
      discovery,
      bus: state,
      build: {
        instanceId: config.INSTANCE_ID,
        displayName: config.ARS_DISPLAY_NAME,
        buildVersion: config.BUILD_VERSION,
        buildCommit: resolveBuildCommit(config.BUILD_COMMIT),
        runtimeVersion: process.version,
      },
      limits: {
        bodyLimitBytes: config.ARS_BODY_LIMIT_BYTES,
        artifactBodyLimitBytes: config.ARS_ARTIFACT_BODY_LIMIT_BYTES,
        inlineArtifactBytes: inlineArtifactBytes(bus.nc.info?.max_payload ?? 1_048_576),
        searchSourceTimeoutMs: config.ARS_SEARCH_SOURCE_TIMEOUT_MS,
        devTokenTtlSeconds: config.ARS_DEV_TOKEN_TTL_SECONDS,
        capabilitiesCacheMs: config.ARS_CAPABILITIES_CACHE_MS,
        events: {
          heartbeatMs: config.ARS_EVENTS_HEARTBEAT_SECONDS * 1000,
          idleCloseMs: config.ARS_EVENTS_IDLE_CLOSE_SECONDS * 1000,
          subscriberBufferBytes: config.ARS_EVENTS_SUBSCRIBER_BUFFER_BYTES,
          scanLimit: config.ARS_EVENTS_SCAN_LIMIT,
        },
      },
    });
    observeGateway(metrics, state, hub);
    const served = await serveGateway(config, bus, state, localHandlers, logger, startedAt);
    const topology = startTopologyWatch({
      discovery,
      publisher: events,
      intervalMs: config.ARS_TOPOLOGY_POLL_MS,
      clock: () => new Date(),
      logger,
    });
    const connected = bus;
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        logger.info('gateway stopping');
        topology.stop();
        await app.close().catch((error: unknown) => logger.error({ err: error }, 'http server did not close cleanly'));
        await watched.stop();
        await served
          .stop()
          .catch((error: unknown) => logger.error({ err: error }, 'services API did not stop cleanly'));
        await connected.close().catch((error: unknown) => logger.error({ err: error }, 'bus did not drain cleanly'));
        await metrics.shutdown();
        await telemetry.shutdown();
        logger.info('gateway stopped');
      })();
      return stopping;
    };
    return { app, stop, ...(auth.devToken === undefined ? {} : { devToken: auth.devToken }) };
  } catch (error) {
    await revocations?.stop();
    await bus?.close().catch(() => undefined);
    await metrics.shutdown();
    await telemetry.shutdown().catch(() => undefined);
    throw error;
  }
}
