import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findFreePort } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';
import { formatChildLine, formatSupervisorLine } from './log-format.ts';
import type { LogFormat, LogFormatOptions } from './log-format.ts';
import { lockDataDir, startLocalNats } from './local-nats.ts';
import type { LocalNatsOptions } from './local-nats.ts';
import { keepLocalNats } from './nats-keeper.ts';
import type { NatsKeeper } from './nats-keeper.ts';
import { restartPolicy } from './system-options.ts';

/**
 * `ars up`'s default: every service and the gateway in this very process,
 * beside its own nats-server (supervised and restarted like in split mode).
 * A separate supervisor process would cost as much memory again as the
 * services' shared modules (about 140 MB), so the CLI hosts them itself; a
 * crash of any service ends `ars up` with the error, and `--split` keeps a
 * supervisor that restarts each service on its own.
 *
 * The composition root is `deploy/src/one-process/system.ts`, loaded by path
 * at run time like the split mode spawns `services/<name>/src/main.ts`:
 * the CLI's own modules never import a service.
 */

/** The composition root of the one process, relative to the repository root. */
const SYSTEM_MODULE = join('deploy', 'src', 'one-process', 'system.ts');

const DEFAULT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** What `ars up` asks of the in-process system. */
export interface InProcessOptions {
  /** Repository root. @default this checkout */
  readonly rootDir?: string;
  readonly dataDir: string;
  readonly port: number;
  readonly host: string;
  readonly natsUrl?: string;
  readonly natsMemoryLimitMiB: number;
  readonly mongoUrl?: string;
  readonly color: boolean;
  /** @default 'pretty' */
  readonly logFormat?: LogFormat;
  /** Where formatted lines go. */
  readonly write: (stream: 'stdout' | 'stderr', text: string) => void;
}

/** The running system. */
export interface InProcessSystem {
  readonly token: string | undefined;
  readonly url: string;
  /** Stops the gateway, the services (each drains), then nats-server; releases the data directory. Idempotent. */
  stop(): Promise<void>;
}

interface SystemModule {
  startAllInOne(options: {
    env: Readonly<Record<string, string | undefined>>;
    destinationOf: (service: string) => { write(chunk: string): void };
  }): Promise<{ devToken: string | undefined; url: string; stop(): Promise<void> }>;
}

/** pino's numeric levels at or above `error` go to stderr. */
const ERROR_LEVEL = 50;

export async function startInProcess(options: InProcessOptions): Promise<InProcessSystem> {
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  const unlock = await lockDataDir(dataDir);
  const format: LogFormatOptions = {
    color: options.color,
    prefixWidth: 'agent-registry'.length,
    format: options.logFormat ?? 'pretty',
  };
  const supervisorLine = (level: 'info' | 'warn' | 'error', message: string): void =>
    options.write(level === 'info' ? 'stdout' : 'stderr', formatSupervisorLine(message, level, format));
  const natsOptions: LocalNatsOptions = { memoryLimitMiB: options.natsMemoryLimitMiB };
  let keeper: NatsKeeper | undefined;
  // nats-server runs in its own process group: if this process dies, nothing else would stop it.
  const killNats = (): void => keeper?.current().kill();
  process.on('exit', killNats);
  try {
    let natsUrl = options.natsUrl;
    if (natsUrl === undefined) {
      const nats: NatsServerHandle = await startLocalNats(dataDir, natsOptions);
      keeper = keepLocalNats(nats, dataDir, natsOptions, supervisorLine);
      keeper.watch(restartPolicyOrDefault());
      natsUrl = nats.url;
    }
    const port = options.port === 0 ? await findFreePort() : options.port;
    const env: Record<string, string | undefined> = {
      ...process.env,
      NATS_URL: natsUrl,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: options.host,
      // Only the given MongoDB: an inherited one would mix this system's data with another's.
      MONGO_URL: options.mongoUrl,
      // Our own nats-server is a single one: an inherited count meant for a cluster would fail every boot.
      ...(keeper === undefined ? {} : { JETSTREAM_REPLICAS: '1' }),
      // OAuth authorizations of MCP servers come back to this gateway unless the operator named its public URL.
      OAUTH_REDIRECT_BASE_URL: process.env['OAUTH_REDIRECT_BASE_URL'] || `http://${browserHost(options.host)}:${port}`,
    };
    delete env['INSTANCE_ID'];
    const root = options.rootDir ?? DEFAULT_ROOT;
    const module = (await import(pathToFileURL(join(root, SYSTEM_MODULE)).href)) as SystemModule;
    const system = await module.startAllInOne({
      env,
      destinationOf: (service) => ({
        write(chunk: string) {
          for (const line of chunk.split('\n')) {
            if (line === '') continue;
            const stream = levelOf(line) >= ERROR_LEVEL ? 'stderr' : 'stdout';
            options.write(stream, formatChildLine(service, line, format));
          }
        },
      }),
    });
    let stopping: Promise<void> | undefined;
    return {
      token: system.devToken,
      url: system.url,
      stop: () =>
        (stopping ??= (async () => {
          await system.stop();
          await keeper?.stop();
          process.removeListener('exit', killNats);
          await unlock();
        })()),
    };
  } catch (error) {
    await keeper?.stop();
    process.removeListener('exit', killNats);
    await unlock();
    throw error;
  }
}

function restartPolicyOrDefault() {
  const policy = restartPolicy(true);
  if (policy === undefined) throw new Error('restartPolicy(true) gave no policy');
  return policy;
}

/** How a browser on this machine reaches a listen address. */
function browserHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

function levelOf(line: string): number {
  const match = /"level":(\d+)/.exec(line);
  return match === null ? 0 : Number(match[1]);
}
