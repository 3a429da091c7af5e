import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@ars/client';
import { SERVICE_NODE_FLAGS, START_ORDER, startSystem } from '../src/index.ts';
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
      expect.arrayContaining(['GOMEMLIMIT=256MiB', 'GOGC=off', expect.stringMatching(/^GODEBUG=madvdontneed=0(,|$)/)]),
    );
    expect(logs.some((line) => line.startsWith('[session]') && line.includes('service started'))).toBe(true);

    await system.stop();
    expect(pids.filter((p) => isAlive(p.pid))).toEqual([]);
  }, 120_000);
});
