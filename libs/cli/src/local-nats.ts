import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';

/** The file under DATA_DIR that remembers the port of the last local nats-server. */
export const NATS_STATE_FILE = 'nats.json';

/** The JetStream store of the local nats-server, under DATA_DIR. */
export function natsStoreDir(dataDir: string): string {
  return join(dataDir, 'nats');
}

/**
 * The threads running the local nats-server's Go code at once
 * (`GOMAXPROCS`; a `GOMAXPROCS` in the environment wins). With one, a
 * message the server routes is read, routed and written by one thread,
 * without handing it to another thread and waking it: nats-server's CPU
 * per run was 6-38% lower (median 22%) in each of ten alternated pairs, the system's
 * CPU per run 7.5% lower over them (bench/HISTORY.md, issue 29). One
 * thread routes the messages of 700–1,000 runs a second here (1.0–1.4 CPU
 * ms a run), more than one executor's event loop keeps up with.
 */
export const NATS_GO_THREADS = 1;

/** How the system's own nats-server runs. */
export interface LocalNatsOptions {
  /** Its memory budget in MiB (see `goMemoryEnvironment` of @ars/bus); 0 leaves Go's defaults. */
  readonly memoryLimitMiB: number;
  /** Port of its HTTP monitoring endpoints on 127.0.0.1; unset serves none. */
  readonly monitorPort?: number;
}

function serverOptions(
  dataDir: string,
  options: LocalNatsOptions,
): { storeDir: string; memoryLimitMiB?: number; goThreads: number; monitorPort?: number; ownProcessGroup: boolean } {
  return {
    storeDir: natsStoreDir(dataDir),
    goThreads: NATS_GO_THREADS,
    // Ctrl-C in the terminal must reach only the supervisor: it stops nats-server last, after the services.
    ownProcessGroup: true,
    ...(options.memoryLimitMiB === 0 ? {} : { memoryLimitMiB: options.memoryLimitMiB }),
    ...(options.monitorPort === undefined ? {} : { monitorPort: options.monitorPort }),
  };
}

/**
 * Starts the system's own nats-server with its JetStream store under
 * `<dataDir>/nats`, so a restart finds its streams again. It listens on the
 * port it had last time when that port is still free, else on a free one;
 * either way the port is recorded for the next start.
 */
export async function startLocalNats(dataDir: string, options: LocalNatsOptions): Promise<NatsServerHandle> {
  const storeDir = natsStoreDir(dataDir);
  await mkdir(storeDir, { recursive: true });
  const previous = await readRecordedPort(dataDir);
  const port = previous !== undefined && (await isPortFree(previous)) ? previous : undefined;
  const server = serverOptions(dataDir, options);
  const handle = await startNatsServer(port === undefined ? server : { ...server, port });
  await writeFile(join(dataDir, NATS_STATE_FILE), JSON.stringify({ port: handle.port }) + '\n');
  return handle;
}

/** Starts the local nats-server again after a crash, on the same port and store, so that clients reconnect by themselves. */
export function restartLocalNats(dataDir: string, port: number, options: LocalNatsOptions): Promise<NatsServerHandle> {
  return startNatsServer({ ...serverOptions(dataDir, options), port });
}

async function readRecordedPort(dataDir: string): Promise<number | undefined> {
  try {
    const state: unknown = JSON.parse(await readFile(join(dataDir, NATS_STATE_FILE), 'utf8'));
    const port = (state as { port?: unknown } | null)?.port;
    return typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
  } catch {
    return undefined;
  }
}

/** True when nothing listens on 127.0.0.1:port (nats-server binds there). */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The lock file that keeps two systems from sharing one DATA_DIR. */
export const LOCK_FILE = 'ars.pid';

/**
 * Takes DATA_DIR for this process: fails when another live process holds it
 * (two systems must never share streams or stores); a stale lock is taken over.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx' });
      return () => rm(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
        throw new Error(`DATA_DIR ${dataDir} is in use by another running system (pid ${holder})`);
      }
      await rm(file, { force: true });
    }
  }
  throw new Error(`could not lock DATA_DIR ${dataDir}`);
}

/** True while a process with this id exists (a permission error still means it exists). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
