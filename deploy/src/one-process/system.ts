import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { ConfigError, loadConfig, startService, telemetryOptionsOf } from '@ars/service-kit';
import type { BaseServiceConfig, ServiceDefinition } from '@ars/service-kit';
import { createLogger, initMetrics, initTelemetry, reportTelemetryProblems } from '@ars/telemetry';
import type { Logger, LoggerOptions } from '@ars/telemetry';
import { agentRegistryService } from '../../../services/agent-registry/src/service.ts';
import { artifactService } from '../../../services/artifact/src/service.ts';
import { readGatewayConfig } from '../../../services/gateway/src/config.ts';
import { startGateway } from '../../../services/gateway/src/server.ts';
import { governanceService } from '../../../services/governance/src/service.ts';
import { memoryService } from '../../../services/memory/src/service.ts';
import { runExecutorService } from '../../../services/run-executor/src/service.ts';
import { sessionService } from '../../../services/session/src/service.ts';

/**
 * The whole system in this Node process: the six services, started
 * together, then the gateway. Each keeps its own configuration, bus
 * connection, store and instance id, and they still talk over NATS, so the
 * topology is the deployed one; only the process boundaries are gone (one
 * V8 heap and one copy of the shared modules instead of seven). `ars up`
 * runs it inside its own process; `main.ts` runs it as a child process for
 * `startSystem({ mode: 'one-process' })`.
 */

type AnyDefinition = ServiceDefinition<z.ZodType<BaseServiceConfig>>;

// Each definition is generic in its own config schema; here they are only started.
const SERVICES = [
  governanceService,
  sessionService,
  agentRegistryService,
  memoryService,
  artifactService,
  runExecutorService,
] as unknown as readonly AnyDefinition[];

/**
 * `service.name` of the one process's resource, traces and metrics alike
 * (`OTEL_SERVICE_NAME` overrides it): each series names its service in
 * `ars.service`, and so does each span (its tracer is named after it too).
 */
export const ONE_PROCESS_NAME = 'agent-run-service';

/** The services of the one process, in start order (the gateway after them). */
export const ONE_PROCESS_SERVICES: readonly string[] = SERVICES.map((definition) => definition.name);

/** Options of {@link startAllInOne}. */
export interface AllInOneOptions {
  /** The environment every service reads (NATS_URL, DATA_DIR, PORT and HOST for the gateway, …). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where a service's log lines go; @default stdout */
  readonly destinationOf?: (service: string) => NonNullable<LoggerOptions['destination']>;
}

/** The running system. */
export interface AllInOne {
  /** The gateway's dev token; undefined in production auth mode. */
  readonly devToken: string | undefined;
  /** Where the gateway listens. */
  readonly url: string;
  /** Stops the gateway first (no new work), then the services in reverse start order (each drains). Idempotent. */
  stop(): Promise<void>;
}

/** A bad environment: every problem, one line each, prefixed with its service. */
export class AllInOneConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'AllInOneConfigError';
    this.problems = problems;
  }
}

/**
 * The environment one service reads: `env` with an instance id of its own (a given INSTANCE_ID becomes its
 * prefix), and its embedded store held by this process alone unless `STORE_LOCKING` says otherwise: no other
 * process runs these services' code on the data directory, and a transaction then takes no file locks.
 */
function environmentOf(env: AllInOneOptions['env'], name: string): Record<string, string | undefined> {
  const prefix = env['INSTANCE_ID'];
  return {
    ...env,
    INSTANCE_ID: prefix === undefined ? `${name}-${randomUUID().slice(0, 8)}` : `${prefix}-${name}`,
    STORE_LOCKING: env['STORE_LOCKING'] || 'exclusive',
  };
}

function loggerOf(options: AllInOneOptions, name: string, level: string): Logger {
  const destination = options.destinationOf?.(name);
  return createLogger({ name, level, ...(destination === undefined ? {} : { destination }) });
}

/** Reads every service's configuration first, so that a bad environment starts nothing. */
function readConfigs(options: AllInOneOptions) {
  const problems: string[] = [];
  const services: { definition: AnyDefinition; config: Readonly<BaseServiceConfig> }[] = [];
  for (const definition of SERVICES) {
    try {
      services.push({ definition, config: loadConfig(definition.config, environmentOf(options.env, definition.name)) });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(`${definition.name}: ${error.message}`);
    }
  }
  let gateway: ReturnType<typeof readGatewayConfig> | undefined;
  try {
    gateway = readGatewayConfig(environmentOf(options.env, 'gateway'));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(`gateway: ${error.message}`);
  }
  if (problems.length > 0 || gateway === undefined) throw new AllInOneConfigError(problems);
  return { services, gateway };
}

/**
 * Starts the six services together, then the gateway, and resolves once
 * the gateway listens. A service that fails to start stops what started and
 * rejects; a bad environment rejects with {@link AllInOneConfigError}
 * before anything starts.
 */
export async function startAllInOne(options: AllInOneOptions): Promise<AllInOne> {
  const configs = readConfigs(options);
  const stops: (() => Promise<void>)[] = [];
  // First, so that the process's one MeterProvider and TracerProvider are named for the system, not for its
  // first service: each service's spans then carry `ars.service` and come from a tracer named after it.
  const { gateway: g } = configs;
  const processTelemetry = telemetryOptionsOf(g, {
    serviceName: ONE_PROCESS_NAME,
    version: g.BUILD_VERSION,
    instanceId: options.env['INSTANCE_ID'] ?? `${ONE_PROCESS_NAME}-${randomUUID().slice(0, 8)}`,
  });
  // The process's telemetry problems (a failed export) are logged once, under a name of their own.
  reportTelemetryProblems(loggerOf(options, 'telemetry', g.LOG_LEVEL));
  const telemetry = initTelemetry(processTelemetry.tracing);
  stops.push(() => telemetry.shutdown());
  const metrics = initMetrics(processTelemetry.metrics);
  stops.push(() => metrics.shutdown());
  const errors: unknown[] = [];
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      for (const stopOne of [...stops].reverse()) await stopOne().catch((error: unknown) => errors.push(error));
    })());
  try {
    const started = await Promise.allSettled(
      configs.services.map(async ({ definition, config }) => {
        const logger = loggerOf(options, definition.name, config.LOG_LEVEL);
        const running = await startService(definition, config, { logger });
        logger.info({ instanceId: running.instanceId }, 'service started');
        return running;
      }),
    );
    // Stopped in reverse start order, whichever finished starting first: the run-executor (last) flushes
    // what it still owes agent-registry and governance while they serve.
    for (const outcome of started) {
      if (outcome.status === 'fulfilled') stops.push(() => outcome.value.stop());
    }
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const gatewayConfig = configs.gateway;
    const gateway = await startGateway(gatewayConfig, {
      logger: loggerOf(options, 'gateway', gatewayConfig.LOG_LEVEL),
    });
    stops.push(() => gateway.stop());
    const url = await gateway.app.listen({ port: gatewayConfig.PORT, host: gatewayConfig.HOST });
    gateway.app.log.info({ url, mode: gatewayConfig.ARS_AUTH_MODE }, 'gateway listening');
    return { devToken: gateway.devToken, url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
