import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findFreePort } from '@ars/bus';
import { getMethod } from '@ars/contracts';

/**
 * `ars up --log-format json`: the services' pino lines reach stdout as they
 * wrote them (one JSON object per line, `trace_id` included), for a log
 * shipper or `jq`; only the two lines `ars up` itself prints for the user
 * (the dev token and the URL) stay plain.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const USER_LINES = /^(SERVICE_DEV_TOKEN=|gateway listening on )/;

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

describe('ars up --log-format json', () => {
  it('writes every service line as JSON, a request inside a trace with its trace_id', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ars-up-json-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const port = await findFreePort();
    const main = join(ROOT, 'libs', 'cli', 'src', 'main.ts');
    const child = spawn(process.execPath, [main, 'up', '--log-format', 'json'], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, NO_COLOR: '1', ARS_UP_MODE: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    cleanup.push(async () => {
      if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const deadline = Date.now() + 90_000;
    while (!out.includes('gateway listening on') && Date.now() < deadline && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const token = /SERVICE_DEV_TOKEN=(\S+)/.exec(out)?.[1];
    expect(token, err).toBeDefined();

    // A start under the caller's trace: the services log its run with that trace id.
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const response = await fetch(`http://127.0.0.1:${port}${getMethod('start')?.routes[0]}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, traceparent, 'content-type': 'application/json' },
      body: JSON.stringify({ identity: {}, query: 'hello' }),
    });
    expect(response.status).toBe(200);
    await response.body?.cancel();
    const waitUntil = Date.now() + 10_000;
    while (!out.includes('4bf92f3577b34da6a3ce929d0e0e4736') && Date.now() < waitUntil) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    process.kill(-(child.pid as number), 'SIGINT');
    expect(await exited).toBe(0);

    const lines = out.split('\n').filter((line) => line !== '' && !USER_LINES.test(line));
    expect(lines.length).toBeGreaterThan(10);
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const services = new Set(records.map((r) => r.service));
    for (const service of ['gateway', 'session', 'run-executor', 'governance']) expect(services).toContain(service);
    expect(out).not.toMatch(/^\[/m);
    // The caller's trace reached the gateway's request line.
    expect(records.some((r) => r.trace_id === '4bf92f3577b34da6a3ce929d0e0e4736')).toBe(true);
  }, 150_000);
});
