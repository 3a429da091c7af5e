import type { z } from 'zod';
import { createLogger } from '@ars/telemetry';
import type { Logger } from '@ars/telemetry';
import { ConfigError, loadConfig } from './config.ts';
import type { BaseServiceConfig } from './config.ts';
import type { ServiceDefinition } from './service-definition.ts';
import { startService } from './start-service.ts';
import type { RunningService } from './start-service.ts';

/** Process exit codes of {@link runService}. */
export const EXIT_CODES = {
  /** Stopped cleanly on SIGTERM or SIGINT. */
  ok: 0,
  /** Start failed, shutdown failed, a second signal, or an unhandled error. */
  failure: 1,
  /** The environment failed validation; every bad variable is on stderr. */
  config: 2,
} as const;

function readConfig<S extends z.ZodType<BaseServiceConfig>>(definition: ServiceDefinition<S>): Readonly<z.output<S>> {
  try {
    return loadConfig(definition.config, process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${definition.name}: ${error.message}\n`);
    return process.exit(EXIT_CODES.config);
  }
}

function exitOnUnhandled(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled rejection');
    process.exit(EXIT_CODES.failure);
  });
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    process.exit(EXIT_CODES.failure);
  });
}

function stopOnSignals(logger: Logger, started: Promise<RunningService>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal, exiting at once');
      process.exit(EXIT_CODES.failure);
    }
    stopping = true;
    logger.info({ signal }, 'shutdown requested');
    started
      .then((running) => running.stop())
      .then(
        () => process.exit(EXIT_CODES.ok),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(EXIT_CODES.failure);
        },
      );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/**
 * The whole life of a service process, called by its `src/main.ts` and by
 * nothing else: reads `process.env` once (a bad environment prints every bad
 * variable to stderr and exits 2), starts the service, logs `service started`,
 * and on SIGTERM/SIGINT stops gracefully and exits 0 (a second signal exits 1
 * at once). A failed start or an unhandled error exits 1.
 */
export async function runService<S extends z.ZodType<BaseServiceConfig>>(
  definition: ServiceDefinition<S>,
): Promise<void> {
  const config = readConfig(definition);
  const logger = createLogger({ name: definition.name, level: config.LOG_LEVEL });
  exitOnUnhandled(logger);
  const started = startService(definition, config, { logger });
  stopOnSignals(logger, started);
  try {
    const running = await started;
    // `service` is stamped on every line by the logger itself.
    logger.info({ instanceId: running.instanceId }, 'service started');
  } catch (error) {
    logger.fatal({ err: error }, 'service failed to start');
    process.exit(EXIT_CODES.failure);
  }
}
