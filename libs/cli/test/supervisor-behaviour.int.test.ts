import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startNatsServer } from '@ars/bus';
import { startSystem } from '../src/index.ts';
import type { LogEntry, RunningSystem, StartSystemOptions } from '../src/index.ts';

// Stand-in services (test/fixtures/fake-root): fast to boot, and they misbehave on request.
const FAKE_ROOT = fileURLToPath(new URL('./fixtures/fake-root/', import.meta.url));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function start(
  overrides: Partial<StartSystemOptions> = {},
): Promise<{ system: RunningSystem; logs: LogEntry[]; dataDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ars-supervisor-'));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
  const logs: LogEntry[] = [];
  const system = await startSystem({
    dataDir,
    port: 0,
    rootDir: FAKE_ROOT,
    color: false,
    readyTimeoutMs: 20_000,
    onLog: (entry) => logs.push(entry),
    ...overrides,
  });
  cleanup.push(() => system.stop());
  return { system, logs, dataDir };
}

async function until<T>(probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('startSystem with stand-in services', () => {
  it('gives every child the system environment and takes the token from the gateway', async () => {
    const { system, logs, dataDir } = await start();
    expect(system.token).toBe('fake.dev.token');
    expect(system.baseUrl).toBe(`http://127.0.0.1:${system.port}`);
    const started = logs.filter((entry) => entry.raw.includes('service started'));
    expect(started).toHaveLength(7);
    expect(started.every((entry) => entry.raw.includes(JSON.stringify(dataDir)))).toBe(true);
    expect(logs.find((entry) => entry.source === 'session')?.text).toMatch(
      /^\[session\] +info  service started instanceId=session-/,
    );
    expect(logs.some((entry) => entry.raw.startsWith('SERVICE_DEV_TOKEN='))).toBe(false);
  });

  it('records the nats-server port under the data directory and reuses the store on restart', async () => {
    const first = await start();
    const recorded = JSON.parse(await readFile(join(first.dataDir, 'nats.json'), 'utf8')) as { port: number };
    expect(first.system.natsUrl).toBe(`nats://127.0.0.1:${recorded.port}`);
    await first.system.stop();
    const second = await startSystem({
      dataDir: first.dataDir,
      port: 0,
      rootDir: FAKE_ROOT,
      color: false,
      onLog: () => {},
    });
    cleanup.push(() => second.stop());
    expect(second.natsUrl).toBe(first.system.natsUrl);
  });

  it('refuses a data directory that a running system holds', async () => {
    const { dataDir } = await start();
    await expect(startSystem({ dataDir, port: 0, rootDir: FAKE_ROOT, onLog: () => {} })).rejects.toThrow(
      /in use by another running system/,
    );
  });

  it('uses a given NATS instead of spawning one', async () => {
    const storeDir = await mkdtemp(join(tmpdir(), 'ars-nats-'));
    cleanup.push(() => rm(storeDir, { recursive: true, force: true }));
    const nats = await startNatsServer({ storeDir });
    cleanup.push(() => nats.stop());
    const { system } = await start({ natsUrl: nats.url });
    expect(system.natsUrl).toBe(nats.url);
    expect(system.processes().map((p) => p.name)).not.toContain('nats-server');
  });

  it('names an unreachable NATS before starting any service', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ars-supervisor-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const logs: LogEntry[] = [];
    const pending = startSystem({
      dataDir,
      port: 0,
      rootDir: FAKE_ROOT,
      natsUrl: 'nats://127.0.0.1:1',
      readyTimeoutMs: 1_000,
      onLog: (e) => logs.push(e),
    });
    await expect(pending).rejects.toThrow(/^cannot reach NATS at nats:\/\/127\.0\.0\.1:1/);
    expect(logs).toEqual([]);
  });

  it('stops the gateway first, then the services, then nats-server, leaving no process', async () => {
    const { system, logs } = await start();
    const pids = system.processes();
    await system.stop();
    expect(pids.filter((p) => isAlive(p.pid))).toEqual([]);
    const stopping = logs.filter((entry) => entry.raw.includes('"stopping"')).map((entry) => entry.source);
    expect(stopping[0]).toBe('gateway');
    expect(stopping).toHaveLength(7);
  });

  it('kills a child that ignores SIGTERM after the grace period', async () => {
    const { system } = await start({ stopGraceMs: 300, env: { FAKE_IGNORE_SIGTERM: 'memory' } });
    const pids = system.processes();
    await system.stop();
    expect(pids.filter((p) => isAlive(p.pid))).toEqual([]);
  });

  it('fails naming a service that exits at boot, with its output, and leaves nothing running', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ars-supervisor-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const error = await startSystem({
      dataDir,
      port: 0,
      rootDir: FAKE_ROOT,
      env: { FAKE_FAIL: 'memory' },
      onLog: () => {},
    }).then(
      () => new Error('the system started'),
      (caught: unknown) => caught as Error,
    );
    expect(error.message).toMatch(/^memory exited with code 3 before it could answer _health over NATS/);
    expect(error.message).toContain('refusing to start (FAKE_FAIL)');
    // The lock is released: the directory can be used again.
    const again = await startSystem({ dataDir, port: 0, rootDir: FAKE_ROOT, onLog: () => {} });
    cleanup.push(() => again.stop());
  });

  it('fails naming a service that never answers _health within the budget', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ars-supervisor-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    await expect(
      startSystem({
        dataDir,
        port: 0,
        rootDir: FAKE_ROOT,
        env: { FAKE_HANG: 'governance' },
        readyTimeoutMs: 4_000,
        onLog: () => {},
      }),
    ).rejects.toThrow(/^governance did not answer _health over NATS within 4s/);
  });

  it('stops everything when the startup is aborted', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ars-supervisor-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const controller = new AbortController();
    const pending = startSystem({
      dataDir,
      port: 0,
      rootDir: FAKE_ROOT,
      signal: controller.signal,
      onLog: (entry) => {
        if (entry.raw.includes('service started')) controller.abort();
      },
    });
    await expect(pending).rejects.toThrow(/aborted/);
  });

  it('kills and starts one service again on request, without an automatic restart', async () => {
    const { system } = await start({ restart: { initialDelayMs: 10 } });
    const before = system.processes().find((p) => p.name === 'session');
    const exit = await system.killService('session', 'SIGKILL');
    expect(exit.signal).toBe('SIGKILL');
    expect(system.processes().find((p) => p.name === 'session')).toBeUndefined();
    await system.startServiceProcess('session');
    const after = system.processes().find((p) => p.name === 'session');
    expect(after?.pid).not.toBe(before?.pid);
    await expect(system.startServiceProcess('session')).rejects.toThrow(/already running/);
  });

  it('restarts a crashed child with backoff and reports it', async () => {
    const { system, logs } = await start({ restart: { initialDelayMs: 50 } });
    const before = system.processes().find((p) => p.name === 'artifact');
    process.kill(before?.pid ?? 0, 'SIGKILL');
    await until(() =>
      logs.find((entry) => entry.source === 'ars' && entry.raw.includes('artifact restarted and answers again')),
    );
    expect(logs.some((entry) => entry.raw === 'artifact was killed by SIGKILL; restarting in 0.05s (1/5)')).toBe(true);
    expect(system.processes().find((p) => p.name === 'artifact')?.pid).not.toBe(before?.pid);
  });

  it('restarts its own nats-server on the same port when it dies', async () => {
    const { system, logs } = await start({ restart: { initialDelayMs: 50 } });
    const before = system.processes().find((p) => p.name === 'nats-server');
    process.kill(before?.pid ?? 0, 'SIGKILL');
    await until(() =>
      logs.find((entry) => entry.raw === 'nats-server restarted; the services reconnect by themselves'),
    );
    const after = system.processes().find((p) => p.name === 'nats-server');
    expect(after?.pid).not.toBe(before?.pid);
    expect(isAlive(after?.pid ?? 0)).toBe(true);
    expect(system.natsUrl).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
  });

  it('gives up on a child that keeps crashing', async () => {
    const { system, logs } = await start({ restart: { initialDelayMs: 20, maxConsecutiveCrashes: 2 } });
    for (let crash = 1; crash <= 3; crash++) {
      const pid = await until(() => system.processes().find((p) => p.name === 'memory')?.pid);
      process.kill(pid, 'SIGKILL');
      await until(() => (system.processes().some((p) => p.name === 'memory' && p.pid === pid) ? undefined : true));
    }
    await until(() => logs.find((entry) => entry.raw.includes('crashed 3 times in a row, not restarting it')));
    expect(system.processes().find((p) => p.name === 'memory')).toBeUndefined();
  });
});
