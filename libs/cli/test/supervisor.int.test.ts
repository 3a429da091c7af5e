import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@ars/client';
import { START_ORDER, startSystem } from '../src/index.ts';
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
    expect(logs.some((line) => line.startsWith('[session]') && line.includes('service started'))).toBe(true);

    await system.stop();
    expect(pids.filter((p) => isAlive(p.pid))).toEqual([]);
  }, 120_000);
});
