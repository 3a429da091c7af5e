import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { EXIT_CODES, loadConfig, startService } from '@ars/service-kit';
import type { BaseServiceConfig, ServiceDefinition } from '@ars/service-kit';
import { createLogger } from '@ars/telemetry';
import { agentRegistryService } from '../../../services/agent-registry/src/service.ts';
import { artifactService } from '../../../services/artifact/src/service.ts';
import { ConfigError, readGatewayConfig } from '../../../services/gateway/src/config.ts';
import { startGateway } from '../../../services/gateway/src/server.ts';
import { governanceService } from '../../../services/governance/src/service.ts';
import { memoryService } from '../../../services/memory/src/service.ts';
import { runExecutorService } from '../../../services/run-executor/src/service.ts';
import { sessionService } from '../../../services/session/src/service.ts';

/**
 * The one-process embedded default (`ars up`): the six services and the
 * gateway in one Node process. Each keeps its own configuration, bus
 * connection, store and instance id, and they still talk over NATS, so the
 * topology is the deployed one; only the process boundary is gone (one V8
 * heap and one copy of the shared modules instead of seven). The services
 * start together, the gateway last; SIGTERM/SIGINT stop the gateway first
 * (no new work), then the services (each drains), and exit 0.
 */

type AnyDefinition = ServiceDefinition<z.ZodType<BaseServiceConfig>>;

const SERVICES: readonly AnyDefinition[] = [
  governanceService,
  sessionService,
  agentRegistryService,
  memoryService,
  artifactService,
  runExecutorService,
] as unknown as readonly AnyDefinition[]; // each definition is generic in its own config schema

const log = createLogger({ name: 'ars', level: process.env['LOG_LEVEL'] === 'silent' ? 'silent' : 'info' });

/** The environment one service reads: the process's, with an instance id of its own. */
function environmentOf(name: string): NodeJS.ProcessEnv {
  const prefix = process.env['INSTANCE_ID'];
  const suffix = randomUUID().slice(0, 8);
  return { ...process.env, INSTANCE_ID: prefix === undefined ? `${name}-${suffix}` : `${prefix}-${name}` };
}

function configOf(definition: AnyDefinition): Readonly<BaseServiceConfig> {
  try {
    return loadConfig(definition.config, environmentOf(definition.name));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${definition.name}: ${error.message}\n`);
    return process.exit(EXIT_CODES.config);
  }
}

async function main(): Promise<void> {
  process.on('unhandledRejection', (reason) => {
    log.fatal({ err: reason }, 'unhandled rejection');
    process.exit(EXIT_CODES.failure);
  });
  process.on('uncaughtException', (error) => {
    log.fatal({ err: error }, 'uncaught exception');
    process.exit(EXIT_CODES.failure);
  });
  const configs = SERVICES.map((definition) => ({ definition, config: configOf(definition) }));
  let gatewayConfig;
  try {
    gatewayConfig = readGatewayConfig(environmentOf('gateway'));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`gateway: ${error.message}\n`);
    process.exit(EXIT_CODES.config);
  }

  const stops: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | undefined;
  // The gateway first: it takes no new requests while the services drain what they hold.
  const stopAll = (): Promise<void> =>
    (stopping ??= (async () => {
      for (const stop of [...stops].reverse()) {
        await stop().catch((error: unknown) => log.error({ err: error }, 'a service did not stop cleanly'));
      }
    })());
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      log.warn({ signal }, 'second signal, exiting at once');
      process.exit(EXIT_CODES.failure);
    }
    signalled = true;
    log.info({ signal }, 'shutdown requested');
    void stopAll().then(() => process.exit(EXIT_CODES.ok));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  try {
    const started = await Promise.allSettled(
      configs.map(async ({ definition, config }) => {
        const logger = createLogger({ name: definition.name, level: config.LOG_LEVEL });
        const running = await startService(definition, config, { logger });
        stops.push(() => running.stop());
        logger.info({ instanceId: running.instanceId }, 'service started');
      }),
    );
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const gateway = await startGateway(gatewayConfig);
    stops.push(() => gateway.stop());
    if (gateway.devToken !== undefined) process.stdout.write(`SERVICE_DEV_TOKEN=${gateway.devToken}\n`);
    const address = await gateway.app.listen({ port: gatewayConfig.PORT, host: gatewayConfig.HOST });
    gateway.app.log.info({ url: address, mode: gatewayConfig.ARS_AUTH_MODE }, 'gateway listening');
  } catch (error) {
    log.fatal({ err: error }, 'the system failed to start');
    await stopAll();
    process.exit(EXIT_CODES.failure);
  }
}

await main();
