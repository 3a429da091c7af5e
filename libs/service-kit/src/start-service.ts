import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { z } from 'zod';
import { METHODS } from '@ars/contracts';
import type { MethodDef } from '@ars/contracts';
import {
  connectBus,
  createEventPublisher,
  createRpcClient,
  ensureInfrastructure,
  flushNow,
  serveService,
} from '@ars/bus';
import type { Bus, RpcHandler, ServedService } from '@ars/bus';
import { openStore } from '@ars/store';
import type { Store } from '@ars/store';
import {
  PROMETHEUS_CONTENT_TYPE,
  createLogger,
  initMetrics,
  initTelemetry,
  metricsText,
  reportTelemetryProblems,
} from '@ars/telemetry';
import type { Logger, Metrics, SpanExporter, Telemetry } from '@ars/telemetry';
import type { BaseServiceConfig } from './config.ts';
import { telemetryOptionsOf } from './telemetry-config.ts';
import { createHealthHandler, HEALTH_METHOD } from './health.ts';
import { buildInternalTable } from './internal-handler.ts';
import { buildMethodTable } from './method-table.ts';
import { ProbeListenError, startProbeServer } from './probe-server.ts';
import { trackReadiness } from './readiness.ts';
import type { ReadinessTracker } from './readiness.ts';
import type { ServiceDefinition, ServiceImplementation } from './service-definition.ts';
import { instrumentHandlers, observeConnection, observeStoreTransactions } from './service-metrics.ts';

/** In-process knobs for tests and embedding; production passes none. */
export interface StartOverrides {
  /** Lines go here instead of a new stdout logger (e.g. a silent one). */
  readonly logger?: Logger;
  /** An extra span exporter (e.g. `InMemorySpanExporter`) fed synchronously. */
  readonly spanExporter?: SpanExporter;
  /** Use an in-memory embedded store: nothing under `DATA_DIR`. @default false */
  readonly inMemoryStore?: boolean;
  /** The method registry to serve from. @default METHODS of `@ars/contracts` */
  readonly methods?: readonly MethodDef[];
}

/** A started service. */
export interface RunningService {
  /** Graceful and idempotent: every call returns the same promise. */
  stop(): Promise<void>;
  readonly instanceId: string;
  readonly served: ServedService;
}

/** The database name of a service: `ars_` + the name with `-` → `_`. */
export function databaseName(service: string): string {
  return `ars_${service.replaceAll('-', '_')}`;
}

interface Closer {
  readonly name: string;
  readonly close: () => Promise<void>;
}

/** Runs closers last-opened first; every one runs even when an earlier one fails. */
async function closeAll(closers: readonly Closer[], logger: Logger | undefined): Promise<void> {
  const failures: unknown[] = [];
  for (const closer of [...closers].reverse()) {
    try {
      await closer.close();
    } catch (error) {
      failures.push(error);
      logger?.error({ err: error, step: closer.name }, 'shutdown step failed');
    }
  }
  if (failures.length > 0) throw new AggregateError(failures, 'service shutdown failed');
}

interface Connections {
  readonly telemetry: Telemetry;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly bus: Bus;
  readonly store: Store;
}

/** Opens telemetry, bus (with infrastructure) and store, pushing a closer for each as it opens. */
async function connect(
  service: string,
  version: string,
  instanceId: string,
  config: Readonly<BaseServiceConfig>,
  overrides: StartOverrides,
  closers: Closer[],
): Promise<Connections> {
  const options = telemetryOptionsOf(config, { serviceName: service, version, instanceId });
  const telemetry = initTelemetry({
    ...options.tracing,
    ...(overrides.spanExporter === undefined ? {} : { exporter: overrides.spanExporter }),
  });
  closers.push({ name: 'telemetry', close: () => telemetry.shutdown() });
  const metrics = initMetrics(options.metrics);
  closers.push({ name: 'metrics', close: () => metrics.shutdown() });
  observeStoreTransactions();
  const base = overrides.logger ?? createLogger({ name: service, level: config.LOG_LEVEL });
  const logger = base.child({ instance_id: instanceId });
  // A failed span or metric export is logged, not lost in silence (the one process: the first installs it).
  reportTelemetryProblems(logger);

  const servers = config.NATS_URL.split(',').map((url) => url.trim());
  const bus = await connectBus({ servers, name: instanceId, logger });
  closers.push({ name: 'bus', close: () => bus.close() });
  observeConnection(metrics, bus);
  // Retention of EVENTS is the gateway's to configure; keep what it set.
  await ensureInfrastructure(bus, { keepEventsRetention: true, replicas: config.JETSTREAM_REPLICAS, logger });

  const store = await openStore({
    mongoUrl: config.MONGO_URL,
    dataDir: join(config.DATA_DIR, service),
    database: databaseName(service),
    engine: config.STORE_ENGINE,
    inMemory: overrides.inMemoryStore ?? false,
    // What the service sends right after a write (an event once its record is committed, a reply) leaves in
    // the commit's turn, not a turn later.
    afterCommit: () => flushNow(bus.nc),
    exclusive: config.STORE_LOCKING === 'exclusive',
  });
  closers.push({ name: 'store', close: () => store.close() });
  return { telemetry, metrics, logger, bus, store };
}

/**
 * Serves every registry method `service` owns plus `_health`, with
 * services-API metadata `{ method, implemented }` per endpoint and
 * `{ instance_id, store_kind, build_version }` (plus the definition's own) per replica.
 */
async function serveMethods(
  definition: ServiceDefinition,
  instanceId: string,
  implementation: ServiceImplementation,
  connections: Connections,
  methods: readonly MethodDef[],
  startedAt: number,
): Promise<ServedService> {
  const { bus, store, logger } = connections;
  const service = definition.name;
  const table = buildMethodTable(service, methods, implementation.handlers);
  const handlers: Record<string, RpcHandler> = {};
  const endpointMetadata: Record<string, Record<string, string>> = {};
  for (const endpoint of table) {
    handlers[endpoint.method] = endpoint.handler;
    endpointMetadata[endpoint.method] = { method: endpoint.method, implemented: String(endpoint.implemented) };
  }
  for (const [name, handler] of Object.entries(buildInternalTable(service, implementation.internalHandlers ?? []))) {
    handlers[name] = handler;
    endpointMetadata[name] = { method: name, implemented: 'true', internal: 'true' };
  }
  const version = definition.version;
  handlers[HEALTH_METHOD] = createHealthHandler({ service, instanceId, version, bus, store, startedAt });
  endpointMetadata[HEALTH_METHOD] = { method: HEALTH_METHOD, implemented: 'true' };

  return serveService(bus, {
    service,
    version,
    instanceId,
    description: `Agent Run Service: ${service}`,
    handlers: instrumentHandlers(service, handlers, connections.metrics),
    endpointMetadata,
    untracedMethods: [HEALTH_METHOD],
    metadata: { ...implementation.metadata, instance_id: instanceId, store_kind: store.kind, build_version: version },
    logger,
  });
}

/** `GET /metrics` of the probe server: every series of the process. */
async function serveMetrics(): Promise<{ text: string; contentType: string } | undefined> {
  const text = await metricsText();
  return text === undefined ? undefined : { text, contentType: PROMETHEUS_CONTENT_TYPE };
}

/**
 * With `HEALTH_PORT`, starts the probe server answering from `readiness`
 * (closed last on stop). A port it cannot listen on fails the boot naming
 * the variable.
 */
async function openProbes(
  config: Readonly<BaseServiceConfig>,
  readiness: ReadinessTracker,
  closers: Closer[],
): Promise<{ readonly host: string; readonly port: number } | undefined> {
  if (config.HEALTH_PORT === undefined) return undefined;
  const host = config.HEALTH_HOST;
  try {
    const probes = await startProbeServer({
      port: config.HEALTH_PORT,
      host,
      readiness: () => readiness.check(),
      metrics: serveMetrics,
    });
    closers.push({ name: 'probes', close: () => probes.close() });
    return { host, port: probes.port };
  } catch (error) {
    if (!(error instanceof ProbeListenError)) throw error;
    const taken = error.code === 'EADDRINUSE' ? ': the port is in use' : '';
    throw new Error(`HEALTH_PORT=${error.port} (HEALTH_HOST=${host}): ${error.message}${taken}`, { cause: error });
  }
}

/**
 * Boots a service in this process: probe server (with `HEALTH_PORT`) →
 * telemetry → logger → bus → infrastructure → store → `build` → serving
 * every registry method the service owns plus `_health`; only then is the
 * probe server's `/readyz` ready. Start failures close what was opened and
 * rethrow. `stop()` makes `/readyz` answer 503 at once, stops serving
 * (drains the subscriptions), runs the definition's stop, closes the store
 * and the bus, shuts telemetry down, and closes the probe server last.
 */
export async function startService<S extends z.ZodType<BaseServiceConfig>>(
  definition: ServiceDefinition<S>,
  config: Readonly<z.output<S>>,
  overrides: StartOverrides = {},
): Promise<RunningService> {
  const startedAt = performance.now();
  const service = definition.name;
  const instanceId = config.INSTANCE_ID ?? `${service}-${randomUUID()}`;
  const closers: Closer[] = [];
  const readiness = trackReadiness();
  let logger: Logger | undefined;
  try {
    const probes = await openProbes(config, readiness, closers);
    const connections = await connect(service, definition.version, instanceId, config, overrides, closers);
    logger = connections.logger;
    if (probes !== undefined) logger.info(probes, 'health probes listening');
    const { bus, store, telemetry, metrics } = connections;
    const implementation = await definition.build({
      config,
      bus,
      store,
      logger,
      publisher: createEventPublisher(bus, { source: service, logger }),
      rpc: createRpcClient(bus),
      instanceId,
      telemetry,
      metrics,
    });
    if (implementation.stop !== undefined) closers.push({ name: 'definition', close: implementation.stop });
    const methods = overrides.methods ?? METHODS;
    const served = await serveMethods(definition, instanceId, implementation, connections, methods, startedAt);
    closers.push({ name: 'serve', close: () => served.stop() });
    readiness.serving({ bus, store });

    const log = logger;
    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        readiness.stopping();
        log.info('service stopping');
        await closeAll(closers, log);
        log.info('service stopped');
      })();
      return stopping;
    };
    return { stop, instanceId, served };
  } catch (error) {
    await closeAll(closers, logger).catch(() => undefined);
    throw error;
  }
}
