import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectBus, createRpcClient } from '@ars/bus';

/**
 * A real service of the system as its own process (`node
 * services/<name>/src/main.ts`) on the test's nats-server: services talk over
 * NATS and never import each other, tests included.
 */
export interface ServiceProcess {
  /** What it wrote so far (for a failing test's message). */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s; resolves once it exited. */
  stop(): Promise<void>;
}

const REPO = resolve(import.meta.dirname, '../../../..');
const READY_TIMEOUT_MS = 30_000;
const PROBE = { tenant: 'probe', user: 'probe', session: 'probe', scopes: [] };

/** Starts `name` with `env` (plus NATS_URL and DATA_DIR) and resolves once it answers `_health`. */
export async function startServiceProcess(
  name: string,
  options: { readonly natsUrl: string; readonly dataDir: string; readonly env?: Record<string, string> },
): Promise<ServiceProcess> {
  const child: ChildProcess = spawn(process.execPath, [join('services', name, 'src', 'main.ts')], {
    cwd: REPO,
    env: { ...process.env, NATS_URL: options.natsUrl, DATA_DIR: options.dataDir, LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };
  const bus = await connectBus({ servers: options.natsUrl, name: `${name}-probe` });
  try {
    const rpc = createRpcClient(bus, { timeoutMs: 500 });
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      try {
        await rpc.call(name, '_health', PROBE, {});
        break;
      } catch (error) {
        if (child.exitCode !== null || Date.now() > deadline) {
          await stop();
          throw new Error(`${name} did not start: ${output}`, { cause: error });
        }
        // Not a timing assumption: the probe is retried until the service registers or the deadline passes.
        await sleep(50);
      }
    }
  } finally {
    await bus.close();
  }
  return { output: () => output, stop };
}
