import { ConfigError, readGatewayConfig } from './config.ts';
import type { GatewayConfig } from './config.ts';
import { startGateway } from './server.ts';

/**
 * The gateway's composition root: config → telemetry → bus →
 * infrastructure → auth → app → listen. In dev mode it prints exactly one
 * stdout line `SERVICE_DEV_TOKEN=<token>`. SIGTERM/SIGINT stop it gracefully.
 */
async function main(): Promise<void> {
  let config: GatewayConfig;
  try {
    config = readGatewayConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`gateway: ${error.message}\n`);
    process.exit(1);
  }
  const runtime = await startGateway(config);
  const log = runtime.app.log;
  if (runtime.devToken !== undefined) process.stdout.write(`SERVICE_DEV_TOKEN=${runtime.devToken}\n`);

  let signalled = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (signalled) return;
    signalled = true;
    log.info({ signal }, 'shutdown requested');
    runtime.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);

  const address = await runtime.app.listen({ port: config.PORT, host: config.HOST });
  log.info({ url: address, mode: config.ARS_AUTH_MODE }, 'gateway listening');
}

main().catch((error: unknown) => {
  process.stderr.write(
    `gateway: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
