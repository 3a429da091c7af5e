/**
 * The supervisor of the system under test, as its own process, so that the
 * benchmark process is the load generator alone and the system is one tree
 * of processes under this one (as under `ars up`): this supervisor,
 * nats-server, and the services in one process or one each.
 *
 * Started by `ars-system.ts` with its settings as JSON in argv[2]
 * ({@link SystemChildSettings}). Prints one line
 * `ARS_BENCH_SYSTEM {baseUrl, token, natsUrl, processes}` once the system
 * is ready, and stops it on SIGTERM, SIGINT or when its stdin closes (the
 * benchmark went away).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SERVICE_NAMES } from '@ars/contracts';
import { SERVICE_NODE_FLAGS, startTestSystem } from '@ars/testkit';
import type { TestSystem } from '@ars/testkit';
import { READY_PREFIX } from './system-ready.ts';
import type { SystemChildSettings, SystemReady } from './system-ready.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** runs.bench.ts `--floor`: stops every service but the gateway and starts the floor executor. */
async function startFloor(system: TestSystem, mode: 'events' | 'queue', env: Record<string, string>) {
  for (const name of SERVICE_NAMES) if (name !== 'gateway') await system.system.killService(name);
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, 'services/run-executor/bench/floor-executor.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, NATS_URL: system.natsUrl, FLOOR_MODE: mode },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  for await (const line of createInterface({ input: child.stdout! })) if (line === 'FLOOR_EXECUTOR_READY') break;
  child.stdout!.resume();
  return child;
}

async function main(): Promise<void> {
  const settings = JSON.parse(process.argv[2] ?? '{}') as SystemChildSettings;
  const system = await startTestSystem({ mode: settings.mode, env: settings.env });
  let floor: ChildProcess | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (floor !== undefined && floor.exitCode === null) {
        floor.kill('SIGTERM');
        await once(floor, 'exit');
      }
      await system.stop();
      process.exit(0);
    })());
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  process.stdin.on('end', () => void stop());
  process.stdin.resume();
  try {
    if (settings.floor !== undefined) floor = await startFloor(system, settings.floor, settings.env);
  } catch (error) {
    await system.stop();
    throw error;
  }
  const processes = system.system.processes();
  const all = floor?.pid === undefined ? processes : [...processes, { name: 'floor-executor', pid: floor.pid }];
  const ready: SystemReady = { baseUrl: system.baseUrl, token: system.token, natsUrl: system.natsUrl, processes: all };
  process.stdout.write(`${READY_PREFIX}${JSON.stringify(ready)}\n`);
}

await main();
