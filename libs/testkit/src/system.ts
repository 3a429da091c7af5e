import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSystem } from '@ars/cli';
import type { LogEntry, RunningSystem } from '@ars/cli';
import { createClient } from '@ars/client';
import type { ArsClient } from '@ars/client';
import { echoLogsByDefault } from './config.ts';

/** The Node.js flags the supervisor gives every service process. */
export { SERVICE_NODE_FLAGS } from '@ars/cli';

/** Options of {@link startTestSystem}. */
export interface TestSystemOptions {
  /** Use this NATS instead of a fresh nats-server. */
  readonly natsUrl?: string;
  /** Use MongoDB instead of the embedded store. */
  readonly mongoUrl?: string;
  /** Extra environment of every service. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * The gateway's port, for a test that must name the gateway's URL in the
   * services' environment before the start (OAUTH_REDIRECT_BASE_URL): pick
   * it with `findFreePort`. @default 0 (a free port chosen at the start)
   */
  readonly port?: number;
  /** Node.js flags of every service process. @default the supervisor's SERVICE_NODE_FLAGS */
  readonly nodeFlags?: readonly string[];
  /** Memory budget of the spawned nats-server in MiB, 0 for Go's defaults. @default the supervisor's */
  readonly natsMemoryLimitMiB?: number;
  /** Port of the spawned nats-server's HTTP monitoring endpoints. @default none */
  readonly natsMonitorPort?: number;
  /** Echo the children's logs to stderr. @default env ARS_TEST_LOGS */
  readonly echoLogs?: boolean;
  /** @default 90000 (two cores, seven processes) */
  readonly readyTimeoutMs?: number;
  /**
   * 'one-process' (what `ars up` runs by default) or 'split' (one process
   * per service, as deployed; needed to kill or restart one service).
   * @default 'split'
   */
  readonly mode?: 'one-process' | 'split';
}

/** One running system for an e2e suite. */
export interface TestSystem {
  readonly baseUrl: string;
  /** The gateway's dev token (default identity dev/dev/dev, admin and console:fleet). */
  readonly token: string;
  readonly natsUrl: string;
  readonly dataDir: string;
  /** A client for the gateway; the dev token unless `token` is given. */
  client(options?: { readonly token?: string; readonly session?: string }): ArsClient;
  /** The supervisor, for killing and restarting services. */
  readonly system: RunningSystem;
  /** The last log lines of every child (newest last). */
  logs(): readonly string[];
  /** Stops every process and deletes the data directory. Idempotent. */
  stop(): Promise<void>;
}

const KEEP_LOG_LINES = 2_000;

/**
 * Starts the whole system (`startSystem`: one process per service, or all in
 * one with `mode: 'one-process'`) on a temporary DATA_DIR and a free port.
 * One per e2e suite, in `beforeAll`.
 */
export async function startTestSystem(options: TestSystemOptions = {}): Promise<TestSystem> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ars-e2e-'));
  const lines: string[] = [];
  const echo = options.echoLogs ?? echoLogsByDefault();
  const onLog = (entry: LogEntry): void => {
    lines.push(entry.text);
    if (lines.length > KEEP_LOG_LINES) lines.splice(0, lines.length - KEEP_LOG_LINES);
    if (echo) process.stderr.write(entry.text + '\n');
  };
  let system: RunningSystem;
  try {
    system = await startSystem({
      dataDir,
      port: options.port ?? 0,
      host: '127.0.0.1',
      readyTimeoutMs: options.readyTimeoutMs ?? 90_000,
      color: false,
      onLog,
      mode: options.mode ?? 'split',
      ...(options.natsUrl === undefined ? {} : { natsUrl: options.natsUrl }),
      ...(options.mongoUrl === undefined ? {} : { mongoUrl: options.mongoUrl }),
      ...(options.env === undefined ? {} : { env: { ...options.env } }),
      ...(options.nodeFlags === undefined ? {} : { nodeFlags: [...options.nodeFlags] }),
      ...(options.natsMemoryLimitMiB === undefined ? {} : { natsMemoryLimitMiB: options.natsMemoryLimitMiB }),
      ...(options.natsMonitorPort === undefined ? {} : { natsMonitorPort: options.natsMonitorPort }),
    });
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const token = system.token;
  if (token === undefined) {
    await system.stop();
    await rm(dataDir, { recursive: true, force: true });
    throw new Error('startTestSystem: the gateway printed no SERVICE_DEV_TOKEN (is ARS_AUTH_MODE=production set?)');
  }
  let stopped: Promise<void> | undefined;
  return {
    baseUrl: system.baseUrl,
    get token() {
      return system.token ?? token;
    },
    natsUrl: system.natsUrl,
    dataDir,
    system,
    client: (clientOptions = {}) =>
      createClient({
        baseUrl: system.baseUrl,
        token: clientOptions.token ?? system.token ?? token,
        ...(clientOptions.session === undefined ? {} : { session: clientOptions.session }),
      }),
    logs: () => [...lines],
    stop() {
      stopped ??= system.stop().finally(() => rm(dataDir, { recursive: true, force: true }));
      return stopped;
    },
  };
}
