import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
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

/** This process's environment with `extra`, and no compile cache setting: `ars up` picks its own under TMPDIR. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env['NODE_COMPILE_CACHE'];
  delete env['NODE_DISABLE_COMPILE_CACHE'];
  return env;
}

/** `ars up [args]` in a process group of its own, with TMPDIR (so its compile cache) in a fresh folder; ready. */
async function startUp(args: readonly string[]) {
  const dataDir = await mkdtemp(join(tmpdir(), 'ars-up-'));
  const tmp = await mkdtemp(join(tmpdir(), 'ars-up-tmp-'));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
  cleanup.push(() => rm(tmp, { recursive: true, force: true }));
  const port = await findFreePort();
  const child = spawn(process.execPath, [join(ROOT, 'libs', 'cli', 'src', 'main.ts'), 'up', ...args], {
    cwd: ROOT,
    env: childEnv({ PORT: String(port), DATA_DIR: dataDir, TMPDIR: tmp, NO_COLOR: '1', ARS_UP_MODE: '' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: the test plays the terminal that sends Ctrl-C to the whole group.
    detached: true,
  });
  cleanup.push(async () => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const output = { out: '', err: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.err += chunk));
  const deadline = Date.now() + 90_000;
  while (!output.out.includes('gateway listening on') && Date.now() < deadline && child.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, exited, output, port, compileCache: join(tmp, 'node-compile-cache') };
}

/** How many files the compile cache folder holds (0 when there is none). */
async function cachedFiles(folder: string): Promise<number> {
  return (await readdir(folder, { recursive: true }).catch(() => [])).length;
}

describe('ars up (one process, the default)', () => {
  it('serves runs from one Node process beside nats-server and stops in order on Ctrl-C', async () => {
    const { child, exited, output, port, compileCache } = await startUp([]);
    expect(output.out, output.err).toContain(`gateway listening on http://127.0.0.1:${port}`);
    const token = /SERVICE_DEV_TOKEN=(\S+)/.exec(output.out)?.[1];
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
      expect(output.out, service).toMatch(new RegExp(`^\\[${service}\\]\\s+info\\s+`, 'm'));
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
    expect(output.err).toContain('ars up: stopped');
    // In order, quietly: the gateway first, then the services; nothing restarted on the way down.
    const stopping = [...output.out.matchAll(/^\[([a-z-]+)\]\s+info\s+(?:gateway|service) stopping/gm)].map(
      (m) => m[1],
    );
    expect(stopping[0]).toBe('gateway');
    expect(stopping).toHaveLength(7);
    expect(output.out + output.err).not.toMatch(/restart/i);
    // Its compiled modules are on disk for the next start.
    expect(await cachedFiles(compileCache)).toBeGreaterThan(0);
  }, 150_000);
});

describe('ars up --split', () => {
  it('shares its compile cache with the service processes, and stops on Ctrl-C', async () => {
    const { child, exited, output, port, compileCache } = await startUp(['--split']);
    expect(output.out, output.err).toContain(`gateway listening on http://127.0.0.1:${port}`);
    const pid = child.pid as number;
    const services = [];
    for (const c of await childrenOf(pid)) {
      const argv = (await readFile(`/proc/${c}/cmdline`, 'utf8').catch(() => '')).split('\0');
      if (argv.some((arg) => arg.endsWith('/src/main.ts'))) {
        services.push((await readFile(`/proc/${c}/environ`, 'utf8')).split('\0'));
      }
    }
    expect(services).toHaveLength(7);
    for (const environ of services) expect(environ).toContain(`NODE_COMPILE_CACHE=${compileCache}`);

    process.kill(-pid, 'SIGINT');
    expect(await exited).toBe(0);
    expect(await cachedFiles(compileCache)).toBeGreaterThan(0);
  }, 150_000);
});
