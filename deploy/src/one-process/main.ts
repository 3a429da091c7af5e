import { EXIT_CODES } from '@ars/service-kit';
import { createLogger } from '@ars/telemetry';
import { AllInOneConfigError, startAllInOne } from './system.ts';

/**
 * The one process as a child of `startSystem({ mode: 'one-process' })`:
 * reads `process.env` once, starts every service and the gateway
 * (system.ts), prints `SERVICE_DEV_TOKEN=<token>` in dev mode, and on
 * SIGTERM/SIGINT stops the gateway, then the services, and exits 0 (a
 * second signal exits 1 at once). A bad environment exits 2, a failed start
 * or an unhandled error 1, as a service process does.
 */

const log = createLogger({ name: 'ars', level: process.env['LOG_LEVEL'] === 'silent' ? 'silent' : 'info' });

process.on('unhandledRejection', (reason) => {
  log.fatal({ err: reason }, 'unhandled rejection');
  process.exit(EXIT_CODES.failure);
});
process.on('uncaughtException', (error) => {
  log.fatal({ err: error }, 'uncaught exception');
  process.exit(EXIT_CODES.failure);
});

let stop: (() => Promise<void>) | undefined;
let signalled = false;
const onSignal = (signal: NodeJS.Signals): void => {
  if (signalled) {
    log.warn({ signal }, 'second signal, exiting at once');
    process.exit(EXIT_CODES.failure);
  }
  signalled = true;
  log.info({ signal }, 'shutdown requested');
  void (stop?.() ?? Promise.resolve()).then(() => process.exit(EXIT_CODES.ok));
};
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);

try {
  const system = await startAllInOne({ env: process.env });
  stop = system.stop;
  if (signalled) await system.stop().then(() => process.exit(EXIT_CODES.ok));
  if (system.devToken !== undefined) process.stdout.write(`SERVICE_DEV_TOKEN=${system.devToken}\n`);
} catch (error) {
  if (error instanceof AllInOneConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(EXIT_CODES.config);
  }
  log.fatal({ err: error }, 'the system failed to start');
  process.exit(EXIT_CODES.failure);
}
