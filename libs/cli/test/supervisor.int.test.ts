import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@ars/client';
import { SERVICE_NODE_FLAGS, START_ORDER, SYSTEM_PROCESS, startSystem } from '../src/index.ts';
import { NATS_GO_THREADS } from '../src/local-nats.ts';
import type { LogEntry, RunningSystem } from '../src/index.ts';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startSystem', () => {
  let dataDir: string;
  let system: RunningSystem | undefined;
  const logs: string[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ars-supervisor-'));
  });

  afterAll(async () => {
    await system?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts nats-server and every service, serves runtime.info with the dev token, and stops leaving no child', async () => {
    system = await startSystem({
      dataDir,
      port: 0,
      readyTimeoutMs: 90_000,
      color: false,
      onLog: (entry: LogEntry) => logs.push(entry.text),
    });
    const pids = system.processes();
    expect(pids.map((p) => p.name).sort()).toEqual([...START_ORDER, 'nats-server'].sort());
    expect(system.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    const info = await createClient({ baseUrl: system.baseUrl, token: system.token }).call<Record<string, unknown>>(
      'runtime.info',
    );
    expect(info['protocol_version']).toBe('0.1.0');
    // Every service runs with the fixed young generation (SERVICE_NODE_FLAGS) before its entry point.
    for (const { name, pid } of pids.filter((p) => p.name !== 'nats-server')) {
      const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
      expect(argv.slice(1, 1 + SERVICE_NODE_FLAGS.length), name).toEqual([...SERVICE_NODE_FLAGS]);
      expect(argv[1 + SERVICE_NODE_FLAGS.length], name).toBe(`services/${name}/src/main.ts`);
    }
    // The local nats-server runs on its memory budget (NATS_MEMORY_LIMIT_MIB's default).
    const nats = pids.find((p) => p.name === 'nats-server');
    const natsEnv = (await readFile(`/proc/${nats?.pid}/environ`, 'utf8')).split('\0');
    expect(natsEnv).toEqual(
      expect.arrayContaining(['GOMEMLIMIT=160MiB', 'GOGC=off', expect.stringMatching(/^GODEBUG=madvdontneed=0(,|$)/)]),
    );
    // On one Go thread (NATS_GO_THREADS), unless the environment names its own GOMAXPROCS.
    expect(natsEnv).toContain(`GOMAXPROCS=${process.env['GOMAXPROCS'] || NATS_GO_THREADS}`);
    expect(logs.some((line) => line.startsWith('[session]') && line.includes('service started'))).toBe(true);
    // Split mode leaves each store open to other processes (another run-executor on the directory): the log's
    // index is the shared -shm file.
    expect(existsSync(join(dataDir, 'run-executor', 'ars_run_executor', 'store.sqlite-shm'))).toBe(true);

    await system.stop();
    expect(pids.filter((p) => isAlive(p.pid))).toEqual([]);
  }, 120_000);
});

describe("startSystem with every service in one child process (mode 'one-process')", () => {
  let dataDir: string;
  let system: RunningSystem | undefined;
  const logs: LogEntry[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ars-one-process-'));
  });

  afterAll(async () => {
    await system?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs every service and the gateway in one Node process, completes a run, and stops in order', async () => {
    system = await startSystem({
      dataDir,
      port: 0,
      mode: 'one-process',
      restart: true,
      readyTimeoutMs: 90_000,
      color: false,
      onLog: (entry: LogEntry) => logs.push(entry),
    });
    const pids = system.processes();
    expect(pids.map((p) => p.name).sort()).toEqual([SYSTEM_PROCESS, 'nats-server'].sort());
    const one = pids.find((p) => p.name === SYSTEM_PROCESS);
    const argv = (await readFile(`/proc/${one?.pid}/cmdline`, 'utf8')).split('\0');
    expect(argv.slice(1)).toEqual([...SERVICE_NODE_FLAGS, 'deploy/src/one-process/main.ts', '']);

    const client = createClient({ baseUrl: system.baseUrl, token: system.token });
    const started = await client.call<{ task_id: string }>('start', { identity: {}, query: 'one process' });
    let status = '';
    for (let i = 0; i < 200 && status !== 'complete'; i++) {
      const task = await client.call<{ task: { status: string } }>('tasks.get', {
        identity: {},
        task_id: started.task_id,
      });
      status = task.task.status;
      if (status !== 'complete') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe('complete');
    // Each line is prefixed with the service that wrote it, not with the process.
    const sources = new Set(logs.map((entry) => entry.source));
    for (const service of START_ORDER) expect(sources, service).toContain(service);
    // The one process holds its stores alone (STORE_LOCKING defaults to exclusive): no shared log index, and
    // another process is locked out until it stops.
    const executorStore = join(dataDir, 'run-executor', 'ars_run_executor', 'store.sqlite');
    expect(existsSync(`${executorStore}-shm`)).toBe(false);
    const outsider = new DatabaseSync(executorStore, { timeout: 0 });
    try {
      expect(() => outsider.prepare('SELECT count(*) FROM sqlite_schema').get()).toThrow(/locked/);
    } finally {
      outsider.close();
    }

    await system.stop();
    expect(pids.filter((p) => isAlive(p.pid))).toEqual([]);
    const stopped = new DatabaseSync(executorStore, { timeout: 0 });
    try {
      expect(stopped.prepare(`SELECT count(*) AS n FROM "c:tasks"`).get()).toEqual({ n: 1 });
    } finally {
      stopped.close();
    }
    const order = logs
      .filter((entry) => /"msg":"(gateway stopping|service stopping)"/.test(entry.raw))
      .map((entry) => entry.source);
    expect(order[0]).toBe('gateway');
    expect(order).toHaveLength(7);
    // A stop is quiet: nothing is restarted on the way down.
    expect(logs.filter((entry) => /restart/i.test(entry.raw)).map((entry) => entry.raw)).toEqual([]);
  }, 120_000);
});
