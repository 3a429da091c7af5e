import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, connect as tcpConnect } from 'node:net';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';

/**
 * Starts local nats-server processes for tests and for `ars dev`. Nothing here
 * runs in a deployed service.
 */

/** Clustering of one server; see {@link startNatsCluster}. */
export interface NatsClusterMembership {
  /** Cluster name, the same on every member. */
  readonly name: string;
  /** Route listen port of this server. */
  readonly port: number;
  /** Route URLs of the other members (`nats-route://127.0.0.1:6222`). */
  readonly routes: readonly string[];
}

export interface NatsServerOptions {
  /** Client port; @default a free port. */
  readonly port?: number;
  /** JetStream store directory (created when missing). */
  readonly storeDir: string;
  readonly serverName?: string;
  readonly cluster?: NatsClusterMembership;
  /** Longest wait for the server to accept connections, in ms. @default 15000 */
  readonly startTimeoutMs?: number;
  /** The binary; @default env `ARS_NATS_SERVER`, else `nats-server` on PATH, else `/usr/sbin/nats-server`. */
  readonly binary?: string;
  /**
   * The server's memory budget, in MiB ({@link goMemoryEnvironment}); unset
   * leaves Go's collector at its defaults.
   */
  readonly memoryLimitMiB?: number;
  /**
   * How many threads run the server's Go code at once (`GOMAXPROCS`), unless
   * the caller's environment sets `GOMAXPROCS` itself; unset leaves Go's
   * default, one per core ({@link serverEnvironment}).
   */
  readonly goThreads?: number;
  /** Port of the server's HTTP monitoring endpoints (`/varz`, `/connz`, `/jsz`) on 127.0.0.1; @default none */
  readonly monitorPort?: number;
  /**
   * Run it in its own process group, so that a terminal's Ctrl-C reaches
   * only its supervisor, which stops it last, after the services.
   * @default false
   */
  readonly ownProcessGroup?: boolean;
}

export interface NatsServerHandle {
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** SIGTERM, then waits for the exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
  /** SIGKILL, without waiting: a crash. */
  kill(): void;
  /**
   * SIGSTOP, resolved once the kernel shows the process stopped (a signal
   * lands when the process is next scheduled): it keeps its connections
   * open and answers nothing. {@link kill} still works; SIGCONT resumes it.
   */
  freeze(): Promise<void>;
  /**
   * After {@link kill} or {@link stop}: waits for this process's exit (which
   * frees the port), then starts nats-server again on the same port and
   * store; clients reconnect to it by themselves. Resolves to the new handle.
   */
  restart(): Promise<NatsServerHandle>;
}

const STDERR_KEEP = 16_384;
const STOP_GRACE_MS = 10_000;

/** A TCP port free on 127.0.0.1 right now (never 4222, the default NATS port). */
export async function findFreePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const address = srv.address();
        const p = typeof address === 'object' && address !== null ? address.port : 0;
        srv.close(() => resolve(p));
      });
    });
    if (port !== 4222 && port !== 0) return port;
  }
}

/** Resolves the nats-server binary. `env` is passed in: this module never reads the environment at import. */
export function resolveNatsServerBinary(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.ARS_NATS_SERVER;
  if (explicit !== undefined && explicit !== '') return explicit;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'nats-server'))) return join(dir, 'nats-server');
  }
  return '/usr/sbin/nats-server';
}

/**
 * True once something on `port` greets like a NATS server (`INFO {…}`): a bare
 * TCP accept is not enough, another process may hold the port.
 */
function speaksNats(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    let greeting = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      greeting += chunk;
      if (greeting.length >= 5) done(greeting.startsWith('INFO '));
    });
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}

function clusterConfig(port: number, options: NatsServerOptions, cluster: NatsClusterMembership): string {
  const routes = cluster.routes.map((r) => JSON.stringify(r)).join(', ');
  return [
    `server_name: ${JSON.stringify(options.serverName ?? `n${port}`)}`,
    `listen: "127.0.0.1:${port}"`,
    `jetstream { store_dir: ${JSON.stringify(options.storeDir)} }`,
    ...(options.monitorPort === undefined ? [] : [`http: "127.0.0.1:${options.monitorPort}"`]),
    `cluster {`,
    `  name: ${JSON.stringify(cluster.name)}`,
    `  listen: "127.0.0.1:${cluster.port}"`,
    `  routes: [${routes}]`,
    `}`,
    '',
  ].join('\n');
}

async function serverArgs(port: number, options: NatsServerOptions): Promise<string[]> {
  await mkdir(options.storeDir, { recursive: true });
  if (options.cluster === undefined) {
    const args = ['-js', '-sd', options.storeDir, '-a', '127.0.0.1', '-p', String(port)];
    if (options.monitorPort !== undefined) args.push('-m', String(options.monitorPort));
    return options.serverName === undefined ? args : [...args, '-n', options.serverName];
  }
  const file = join(options.storeDir, `nats-${port}.conf`);
  await writeFile(file, clusterConfig(port, options, options.cluster));
  return ['-c', file];
}

/**
 * The environment that gives a Go program a fixed memory budget: collect
 * when the runtime's memory reaches `limitMiB` (`GOMEMLIMIT`) rather than
 * each time the heap doubles its live data (`GOGC=off`). Go's default
 * pacing let nats-server's resident memory swing by a third every 30 s
 * under steady load (its message-block caches come and go in 8 MiB
 * buffers, and the collector returns the freed pages to the system in
 * between); with a budget it collects less often, and it hands the pages
 * it frees back with `MADV_FREE` (`madvdontneed=0`) instead of
 * `MADV_DONTNEED`: the kernel takes them back only when it needs the
 * memory, so the resident size stays level instead of dipping by a tenth
 * after each collection and faulting the pages in again (bench/HISTORY.md,
 * eighth pass). The limit is soft: a live heap beyond it still grows,
 * collected continuously (Go caps that at half the CPU), so the budget
 * must sit well above the server's live data. `inheritedGodebug`, the
 * caller's own `GODEBUG`, comes after ours, so its settings win.
 */
export function goMemoryEnvironment(limitMiB: number, inheritedGodebug?: string): Record<string, string> {
  if (!Number.isInteger(limitMiB) || limitMiB <= 0)
    throw new RangeError(`memory limit must be a positive number of MiB, got ${limitMiB}`);
  const godebug = ['madvdontneed=0', inheritedGodebug].filter((part) => part !== undefined && part !== '').join(',');
  return { GOMEMLIMIT: `${limitMiB}MiB`, GOGC: 'off', GODEBUG: godebug };
}

/**
 * The environment nats-server runs with: the caller's, with the memory
 * budget's settings ({@link goMemoryEnvironment}) and `GOMAXPROCS` from
 * `goThreads` when given. A `GOMAXPROCS` the caller set wins: it is an
 * operator's own choice for this machine.
 */
export function serverEnvironment(
  options: Pick<NatsServerOptions, 'memoryLimitMiB' | 'goThreads'>,
  inherited: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const { memoryLimitMiB, goThreads } = options;
  if (goThreads !== undefined && (!Number.isInteger(goThreads) || goThreads <= 0))
    throw new RangeError(`goThreads must be a positive whole number, got ${goThreads}`);
  const memory = memoryLimitMiB === undefined ? {} : goMemoryEnvironment(memoryLimitMiB, inherited['GODEBUG']);
  const inheritedThreads = inherited['GOMAXPROCS'];
  const threads =
    goThreads === undefined || (inheritedThreads !== undefined && inheritedThreads !== '')
      ? {}
      : { GOMAXPROCS: String(goThreads) };
  return { ...inherited, ...memory, ...threads };
}

interface Spawned {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  /** True once this process logged "Server is ready" (it, not another process, holds the port). */
  readonly ready: () => boolean;
  readonly exited: Promise<number | null>;
}

function spawnServer(
  binary: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  ownProcessGroup: boolean,
): Spawned {
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], env, detached: ownProcessGroup });
  let stderr = '';
  let ready = false;
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEEP);
    ready ||= stderr.includes('Server is ready');
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (error) => {
      stderr += `\n${error.message}`;
      resolve(null);
    });
  });
  return { child, stderr: () => stderr, ready: () => ready, exited };
}

async function waitUntilListening(spawned: Spawned, port: number, timeoutMs: number): Promise<void> {
  let exited = false;
  void spawned.exited.then(() => {
    exited = true;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`nats-server exited before accepting connections on ${port}:\n${spawned.stderr()}`);
    if (spawned.ready() && (await speaksNats(port)) && !exited) return;
    await sleep(50);
  }
  spawned.child.kill('SIGKILL');
  throw new Error(`nats-server did not accept connections on ${port} within ${timeoutMs} ms:\n${spawned.stderr()}`);
}

function handleFor(spawned: Spawned, port: number, options: NatsServerOptions): NatsServerHandle {
  const { child } = spawned;
  // A crashed test runner must not leave servers behind.
  const onExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', onExit);
  void spawned.exited.then(() => process.removeListener('exit', onExit));
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? -1,
    async stop(): Promise<void> {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const grace = sleep(STOP_GRACE_MS).then(() => 'late' as const);
      if ((await Promise.race([spawned.exited, grace])) === 'late') {
        child.kill('SIGKILL');
        await spawned.exited;
      }
    },
    kill(): void {
      child.kill('SIGKILL');
    },
    async freeze(): Promise<void> {
      child.kill('SIGSTOP');
      for (let i = 0; (await readFile(`/proc/${child.pid}/stat`, 'utf8')).split(' ')[2] !== 'T'; i++) {
        if (i > 500) throw new Error('nats-server did not stop');
        await sleep(2);
      }
    },
    async restart(): Promise<NatsServerHandle> {
      await spawned.exited;
      return startNatsServer({ ...options, port });
    },
  };
}

/**
 * Spawns nats-server with JetStream on 127.0.0.1 and resolves once it logged
 * "Server is ready" and greets a TCP connection with its INFO line. Without `port` a free one is chosen (and chosen again if
 * another process takes it first). Fails with the server's stderr.
 */
export async function startNatsServer(options: NatsServerOptions): Promise<NatsServerHandle> {
  const binary = options.binary ?? resolveNatsServerBinary();
  // Built before anything is spawned: a bad budget or thread count fails the call, not the server.
  const env = serverEnvironment(options);
  const timeoutMs = options.startTimeoutMs ?? 15_000;
  const attempts = options.port === undefined ? 3 : 1;
  let lastError: unknown;
  for (let i = 0; i < attempts; i++) {
    const port = options.port ?? (await findFreePort());
    const spawned = spawnServer(binary, await serverArgs(port, options), env, options.ownProcessGroup ?? false);
    try {
      await waitUntilListening(spawned, port, timeoutMs);
      return handleFor(spawned, port, options);
    } catch (error) {
      lastError = error;
      if (!spawned.stderr().includes('address already in use')) break;
    }
  }
  throw lastError;
}

export interface NatsClusterOptions {
  /** @default 3 */
  readonly size?: number;
  /** Parent directory; each server stores under `<storeDir>/n<i>`. */
  readonly storeDir: string;
  /** @default 'ars' */
  readonly name?: string;
  /** Longest wait for a JetStream leader, in ms. @default 30000 */
  readonly readyTimeoutMs?: number;
}

export interface NatsClusterHandle {
  readonly servers: readonly NatsServerHandle[];
  /** Client URLs of every member. */
  readonly urls: readonly string[];
  stop(): Promise<void>;
}

/**
 * Resolves once JetStream answers with a meta leader and, on a cluster of
 * `peers` servers, can place a stream on every one of them: a meta leader
 * elected before all peers joined refuses an `peers`-replica stream "no
 * suitable peers for placement". The probe is a memory stream, deleted at once.
 */
async function waitForJetStream(urls: readonly string[], timeoutMs: number, peers = 1): Promise<void> {
  const nc = await connect({ servers: [...urls], maxReconnectAttempts: -1 });
  try {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    while (Date.now() < deadline) {
      try {
        const jsm = await jetstreamManager(nc, { timeout: 2_000 });
        await jsm.getAccountInfo();
        if (peers > 1) {
          const probe = `ars_cluster_probe_${process.pid}_${Date.now()}`;
          await jsm.streams.add({
            name: probe,
            subjects: [`${probe}.x`],
            num_replicas: peers,
            storage: StorageType.Memory,
          });
          await jsm.streams.delete(probe);
        }
        return;
      } catch (error) {
        lastError = error;
        await sleep(200);
      }
    }
    throw new Error(`JetStream did not place a ${peers}-replica stream within ${timeoutMs} ms`, { cause: lastError });
  } finally {
    await nc.close();
  }
}

/**
 * Starts `size` clustered servers (routes to each other, distinct server
 * names, JetStream on each) and resolves once JetStream can place a stream on all of them.
 */
export async function startNatsCluster(options: NatsClusterOptions): Promise<NatsClusterHandle> {
  const size = options.size ?? 3;
  const name = options.name ?? 'ars';
  const ports: number[] = [];
  const routePorts: number[] = [];
  while (ports.length < size * 2) {
    const p = await findFreePort();
    if (!ports.includes(p)) ports.push(p);
  }
  routePorts.push(...ports.splice(size));
  const routes = routePorts.map((p) => `nats-route://127.0.0.1:${p}`);
  const started = await Promise.allSettled(
    ports.map((port, i) =>
      startNatsServer({
        port,
        storeDir: join(options.storeDir, `n${i + 1}`),
        serverName: `${name}-n${i + 1}`,
        cluster: { name, port: routePorts[i] ?? 0, routes: routes.filter((_, j) => j !== i) },
      }),
    ),
  );
  const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  const failed = started.find((r) => r.status === 'rejected');
  if (failed !== undefined) {
    await stop();
    throw failed.reason;
  }
  const urls = servers.map((s) => s.url);
  try {
    await waitForJetStream(urls, options.readyTimeoutMs ?? 30_000, size);
  } catch (error) {
    await stop();
    throw error;
  }
  return { servers, urls, stop };
}
