import { ConfigError, parseUpConfig, useColor } from '../config.ts';
import type { UpConfig } from '../config.ts';
import { ensureConsoleBuilt } from '../console-build.ts';
import { EXIT } from '../io.ts';
import type { Io } from '../io.ts';
import type { LogFormat } from '../log-format.ts';
import { startInProcess } from '../in-process.ts';
import { startSystem } from '../supervisor.ts';
import type { RunningSystem } from '../supervisor.ts';

/** Options of `ars up` from its command line. */
export interface UpOptions {
  /** `--split`: one process per service instead of one for the whole system. */
  readonly split?: boolean;
  /** `--log-format`: `pretty` (readable lines with trace ids) or `json` (the services' lines as they are). @default 'pretty' */
  readonly logFormat?: LogFormat;
}

/**
 * `ars up`: starts the whole system (by default every service in one Node
 * process, `--split` or ARS_UP_MODE=split one process each) and keeps it
 * running until Ctrl-C or SIGTERM, then stops it in order: the gateway, the
 * services, nats-server last (exit 0). A second signal kills everything at
 * once (exit 1). A crashed child is restarted with backoff.
 */
export async function upCommand(io: Io, options: UpOptions = {}): Promise<number> {
  let config: UpConfig;
  try {
    config = parseUpConfig(io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr(
      `ars up: invalid environment:\n${error.problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}\n`,
    );
    return EXIT.usage;
  }

  await buildConsole(io);
  const controller = new AbortController();
  const stopRequested = Promise.withResolvers<void>();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      io.stderr(`ars up: ${signal} again, killing everything\n`);
      // The exit hooks SIGKILL every child (nats-server included).
      process.exit(EXIT.failure);
    }
    io.stderr(`ars up: ${signal}, stopping (again to force)\n`);
    controller.abort();
    stopRequested.resolve();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const split = options.split === true || config.ARS_UP_MODE === 'split';
  try {
    let system: { readonly token: string | undefined; stop(): Promise<void> };
    let url: string;
    try {
      if (split) {
        const running: RunningSystem = await startSystem({
          dataDir: config.DATA_DIR,
          port: config.PORT,
          host: config.HOST,
          ...(config.NATS_URL === undefined ? {} : { natsUrl: config.NATS_URL }),
          natsMemoryLimitMiB: config.NATS_MEMORY_LIMIT_MIB,
          ...(config.MONGO_URL === undefined ? {} : { mongoUrl: config.MONGO_URL }),
          mode: 'split',
          restart: true,
          color: useColor(io.env, io.isTty),
          logFormat: options.logFormat ?? 'pretty',
          signal: controller.signal,
        });
        system = running;
        url = `http://${formatHost(config.HOST)}:${running.port}`;
      } else {
        const running = await startInProcess({
          dataDir: config.DATA_DIR,
          port: config.PORT,
          host: config.HOST,
          ...(config.NATS_URL === undefined ? {} : { natsUrl: config.NATS_URL }),
          natsMemoryLimitMiB: config.NATS_MEMORY_LIMIT_MIB,
          ...(config.MONGO_URL === undefined ? {} : { mongoUrl: config.MONGO_URL }),
          color: useColor(io.env, io.isTty),
          logFormat: options.logFormat ?? 'pretty',
          write: (stream, text) => (stream === 'stdout' ? io.stdout : io.stderr)(`${text}\n`),
        });
        system = running;
        url = running.url;
        // A signal during the start: stop what started.
        if (controller.signal.aborted) {
          await running.stop();
          io.stderr('ars up: stopped\n');
          return EXIT.ok;
        }
      }
    } catch (error) {
      if (controller.signal.aborted) {
        io.stderr('ars up: stopped\n');
        return EXIT.ok;
      }
      io.stderr(`ars up: ${error instanceof Error ? error.message : String(error)}\n`);
      return EXIT.failure;
    }
    if (system.token !== undefined) io.stdout(`SERVICE_DEV_TOKEN=${system.token}\n`);
    io.stdout(`gateway listening on ${url}\n`);
    io.stderr(`ars up: the console is at ${url}/console/\n`);
    await stopRequested.promise;
    await system.stop();
    io.stderr('ars up: stopped\n');
    return EXIT.ok;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

/** Builds the browser console when its dist is missing or stale; a failure is reported, not fatal (the gateway then answers /console with 503). */
async function buildConsole(io: Io): Promise<void> {
  const result = await ensureConsoleBuilt();
  if (result.status === 'built') io.stderr('ars up: built the console (apps/console/dist)\n');
  if (result.status === 'absent') io.stderr(`ars up: console not built: ${result.reason}\n`);
  if (result.status === 'failed')
    io.stderr(`${result.output}\nars up: the console's build failed; /console answers 503\n`);
}

function formatHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
