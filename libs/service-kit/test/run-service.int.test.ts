import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'process-service.ts');

interface Child {
  readonly exited: Promise<number | null>;
  readonly stderr: () => string;
  /** Resolves when a stdout line contains `text`. */
  readonly line: (text: string) => Promise<string>;
  readonly signal: (signal: NodeJS.Signals) => void;
}

function startChild(env: Record<string, string>): Child {
  const child = spawn(process.execPath, [FIXTURE], { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  const waiters: Array<{ text: string; resolve: (line: string) => void }> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const waiter of [...waiters]) {
      const line = stdout.split('\n').find((l) => l.includes(waiter.text));
      if (line !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    exited,
    stderr: () => stderr,
    line: (text) =>
      new Promise((resolve, reject) => {
        waiters.push({ text, resolve });
        void exited.then((code) => reject(new Error(`exited ${code} before "${text}": ${stderr}${stdout}`)));
      }),
    signal: (signal) => child.kill(signal),
  };
}

describe('runService', () => {
  let storeDir: string;
  let nats: NatsServerHandle;

  beforeAll(async () => {
    storeDir = await mkdtemp(join(tmpdir(), 'ars-run-service-'));
    nats = await startNatsServer({ storeDir: join(storeDir, 'nats') });
  });

  afterAll(async () => {
    await nats?.stop();
    await rm(storeDir, { recursive: true, force: true });
  });

  it('exits 2 listing every bad variable on stderr', async () => {
    const child = startChild({ LOG_LEVEL: 'loud', MONGO_URL: 'http://db' });
    expect(await child.exited).toBe(2);
    expect(child.stderr()).toMatch(/NATS_URL: is required/);
    expect(child.stderr()).toMatch(/LOG_LEVEL: /);
    expect(child.stderr()).toMatch(/MONGO_URL: /);
  });

  it('logs service started, then exits 0 on SIGTERM', async () => {
    const child = startChild({ NATS_URL: nats.url, DATA_DIR: join(storeDir, 'data'), INSTANCE_ID: 'memory-proc-1' });
    const started = JSON.parse(await child.line('service started')) as Record<string, unknown>;
    expect(started).toMatchObject({ service: 'memory', instanceId: 'memory-proc-1' });
    child.signal('SIGTERM');
    expect(await child.exited).toBe(0);
  });
});
