import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findFreePort } from '@ars/bus';
import { createClient } from '@ars/client';

/**
 * `ars up` as a user runs it: the default mode hosts every service and the
 * gateway in the CLI's own process, beside nats-server; Ctrl-C (SIGINT to
 * the terminal's process group) stops it in order and leaves nothing.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.split(/\s+/).filter(Boolean).map(Number);
}

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

describe('ars up (one process, the default)', () => {
  it('serves runs from one Node process beside nats-server and stops in order on Ctrl-C', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ars-up-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const port = await findFreePort();
    const child = spawn(process.execPath, [join(ROOT, 'libs', 'cli', 'src', 'main.ts'), 'up'], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, NO_COLOR: '1', ARS_UP_MODE: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: the test plays the terminal that sends Ctrl-C to the whole group.
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
    expect(out, err).toContain(`gateway listening on http://127.0.0.1:${port}`);
    const token = /SERVICE_DEV_TOKEN=(\S+)/.exec(out)?.[1];
    expect(token).toBeDefined();

    // One Node process (the CLI itself) and nats-server: nothing else.
    const pid = child.pid as number;
    const children = await childrenOf(pid);
    const names = await Promise.all(
      children.map(async (c) => (await readFile(`/proc/${c}/comm`, 'utf8').catch(() => '')).trim()),
    );
    expect(names).toEqual(['nats-server']);
    // Each line names the service that wrote it.
    for (const service of [
      'gateway',
      'session',
      'run-executor',
      'agent-registry',
      'memory',
      'artifact',
      'governance',
    ]) {
      expect(out, service).toMatch(new RegExp(`^\\[${service}\\]\\s+info\\s+`, 'm'));
    }

    const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, token });
    const started = await client.call<{ task_id: string }>('start', { identity: {}, query: 'hello' });
    let status = '';
    for (let i = 0; i < 200 && status !== 'complete'; i++) {
      status = (
        await client.call<{ task: { status: string } }>('tasks.get', { identity: {}, task_id: started.task_id })
      ).task.status;
      if (status !== 'complete') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe('complete');

    process.kill(-pid, 'SIGINT');
    expect(await exited).toBe(0);
    expect(children.filter(isAlive)).toEqual([]);
    expect(err).toContain('ars up: stopped');
    // In order, quietly: the gateway first, then the services; nothing restarted on the way down.
    const stopping = [...out.matchAll(/^\[([a-z-]+)\]\s+info\s+(?:gateway|service) stopping/gm)].map((m) => m[1]);
    expect(stopping[0]).toBe('gateway');
    expect(stopping).toHaveLength(7);
    expect(out + err).not.toMatch(/restart/i);
  }, 150_000);
});
