/**
 * This system under test, as a tree of processes under one supervisor, so
 * that the benchmark process is the load generator alone:
 *
 * - one-process and split mode: `ars up` itself (`libs/cli/src/main.ts up`,
 *   what `./ars up` execs) on a free port and a temporary DATA_DIR, with
 *   ARS_UP_MODE; its supervisor is the one users run;
 * - the floor of the message flow (runs.bench.ts `--floor`): `system-child.ts`,
 *   which starts split mode with `startTestSystem` and replaces every service
 *   but the gateway by the floor executor (`ars up` cannot stop one service).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ARS_NODE_FLAGS } from '@ars/cli';
import { createClient } from '@ars/client';
import type { ArsClient } from '@ars/client';
import { descendants } from './proc-tree.ts';
import { READY_PREFIX } from './system-ready.ts';
import type { SystemChildSettings, SystemReady } from './system-ready.ts';

/** A running system and its supervisor. */
export interface ArsSystem {
  readonly baseUrl: string;
  /** The supervisor's pid: the root of the system's process tree. */
  readonly supervisorPid: number;
  /**
   * The pid to leave out of the system's figures: the supervisor, unless it
   * hosts the services itself (`ars up`'s one-process mode), when it is the
   * system.
   */
  readonly excludedPid: number | undefined;
  /** A client with the dev token, in `session`. */
  client(session?: string): ArsClient;
  /** Stops the system and its supervisor; SIGKILL to the whole tree after `graceMs`. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'libs', 'cli', 'src', 'main.ts');
const CHILD = fileURLToPath(new URL('./system-child.ts', import.meta.url));
/** Lines of the supervisor's output kept for an error message. */
const KEEP_LINES = 40;

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

/**
 * Reads the supervisor's output until `parse` has what it needs (or the
 * supervisor exits, or `timeoutMs` passes), then keeps draining it.
 */
async function awaitReady<T>(
  child: ChildProcess,
  parse: (line: string) => T | undefined,
  timeoutMs: number,
): Promise<T> {
  const tail: string[] = [];
  const keep = (line: string) => {
    tail.push(line);
    if (tail.length > KEEP_LINES) tail.shift();
  };
  createInterface({ input: child.stderr! }).on('line', keep);
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  try {
    for await (const line of createInterface({ input: child.stdout! })) {
      keep(line);
      const ready = parse(line);
      if (ready !== undefined) return ready;
    }
  } finally {
    clearTimeout(timer);
    // The supervisor goes on writing its children's logs: keep its pipes drained.
    child.stdout!.resume();
  }
  throw new Error(
    `the system's supervisor exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${tail.join('\n')}`,
  );
}

function handle(
  child: ChildProcess,
  baseUrl: string,
  token: string,
  cleanup: () => Promise<void>,
  hostsServices: boolean,
): ArsSystem {
  const exited = child.exitCode === null ? once(child, 'exit') : Promise.resolve();
  let stopped: Promise<void> | undefined;
  return {
    baseUrl,
    supervisorPid: child.pid!,
    excludedPid: hostsServices ? undefined : child.pid!,
    client: (session) => createClient({ baseUrl, token, ...(session === undefined ? {} : { session }) }),
    stop(graceMs = 30_000) {
      stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          // Past the grace the supervisor cannot stop its children any more: kill the whole tree.
          const timer = setTimeout(() => {
            for (const { pid } of descendants(child.pid!).reverse()) killQuietly(pid);
          }, graceMs);
          await exited;
          clearTimeout(timer);
        }
        await cleanup();
      })();
      return stopped;
    },
  };
}

/** `ars up` in `mode`, with `env` for every service; resolves once it printed its address. */
async function startArsUp(
  mode: 'one-process' | 'split',
  env: Record<string, string>,
  timeoutMs: number,
  nodeFlags: readonly string[] = ARS_NODE_FLAGS,
) {
  const dataDir = await mkdtemp(join(tmpdir(), 'ars-peer-bench-data-'));
  // As the ./ars wrapper starts it: the heap flags of the one process, unless the run tries others.
  const child = spawn(process.execPath, [...nodeFlags, CLI, 'up'], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ARS_UP_MODE: mode, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Should this process exit without stopping it (an interrupt during the start), take the tree down with it.
  const killOnExit = () => {
    for (const { pid } of descendants(child.pid!).reverse()) killQuietly(pid);
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.on('exit', killOnExit);
  const cleanup = async () => {
    process.off('exit', killOnExit);
    await rm(dataDir, { recursive: true, force: true });
  };
  let token: string | undefined;
  try {
    const baseUrl = await awaitReady(
      child,
      (line) => {
        token ??= /^SERVICE_DEV_TOKEN=(\S+)$/.exec(line)?.[1];
        return /^gateway listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line)?.[1];
      },
      timeoutMs,
    );
    if (token === undefined) throw new Error('ars up printed no SERVICE_DEV_TOKEN (is ARS_AUTH_MODE=production set?)');
    return handle(child, baseUrl, token, cleanup, mode === 'one-process');
  } catch (error) {
    killOnExit();
    await cleanup();
    throw error;
  }
}

/** Starts the system and resolves once the gateway answers. */
export async function startArsSystem(settings: SystemChildSettings, readyTimeoutMs = 180_000): Promise<ArsSystem> {
  if (settings.floor === undefined) {
    return startArsUp(settings.mode, settings.env, readyTimeoutMs, settings.nodeFlags);
  }
  const child = spawn(process.execPath, [CHILD, JSON.stringify(settings)], { stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    const ready = await awaitReady<SystemReady>(
      child,
      (line) =>
        line.startsWith(READY_PREFIX) ? (JSON.parse(line.slice(READY_PREFIX.length)) as SystemReady) : undefined,
      readyTimeoutMs,
    );
    return handle(child, ready.baseUrl, ready.token, async () => {}, false);
  } catch (error) {
    for (const { pid } of descendants(child.pid!).reverse()) killQuietly(pid);
    throw error;
  }
}
