import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsCluster, startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';

/** A throwaway nats-server with JetStream for one integration suite. */
export interface TestNats {
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Its JetStream store, a fresh temporary directory. */
  readonly storeDir: string;
  /** The server's process id (a new one after {@link restart}). */
  readonly pid: number;
  /** Kills the server with SIGKILL (a crash), without waiting; the store stays. */
  kill(): void;
  /** Starts the server again on the same port and store, after {@link kill}: clients reconnect by themselves. */
  restart(): Promise<void>;
  /** Stops the server and deletes its store. Idempotent. */
  stop(): Promise<void>;
}

/** Starts nats-server on a free port with a temporary store; `stop()` cleans both up. */
export async function startTestNats(): Promise<TestNats> {
  const storeDir = await mkdtemp(join(tmpdir(), 'ars-nats-'));
  let server;
  try {
    server = await startNatsServer({ storeDir });
  } catch (error) {
    await rm(storeDir, { recursive: true, force: true });
    throw error;
  }
  let stopped: Promise<void> | undefined;
  let handle = server;
  const { url, port } = handle;
  return {
    url,
    port,
    storeDir,
    get pid() {
      return handle.pid;
    },
    kill() {
      handle.kill();
    },
    async restart() {
      handle = await handle.restart();
    },
    stop() {
      stopped ??= handle.stop().finally(() => rm(storeDir, { recursive: true, force: true }));
      return stopped;
    },
  };
}

/** A throwaway 3-node JetStream cluster for failover tests. */
export interface TestNatsCluster {
  /** Client URLs of every member, comma-joined (a NATS_URL value). */
  readonly url: string;
  readonly urls: readonly string[];
  /** The members, for killing one (`servers[i].kill()`). */
  readonly servers: readonly NatsServerHandle[];
  /** Stops every member and deletes their stores. Idempotent. */
  stop(): Promise<void>;
}

/** Starts a clustered nats-server set (default 3) on free ports with temporary stores. */
export async function startTestNatsCluster(options: { readonly size?: number } = {}): Promise<TestNatsCluster> {
  const storeDir = await mkdtemp(join(tmpdir(), 'ars-nats-cluster-'));
  let cluster;
  try {
    cluster = await startNatsCluster({ storeDir, ...(options.size === undefined ? {} : { size: options.size }) });
  } catch (error) {
    await rm(storeDir, { recursive: true, force: true });
    throw error;
  }
  let stopped: Promise<void> | undefined;
  const handle = cluster;
  return {
    url: handle.urls.join(','),
    urls: handle.urls,
    servers: handle.servers,
    stop() {
      stopped ??= handle.stop().finally(() => rm(storeDir, { recursive: true, force: true }));
      return stopped;
    },
  };
}
