import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createRpcClient } from '@ars/bus';
import type { Bus } from '@ars/bus';

/**
 * Other services of the system, the real ones, each as its own process
 * (`node services/<name>/src/main.ts`) on the test's nats-server and a data
 * directory of the test's: services talk over NATS and never import each
 * other, tests included.
 */

const REPO = resolve(import.meta.dirname, '../../../..');

/** Services a run-executor test may start for real. */
export type PeerService = 'governance' | 'agent-registry' | 'memory' | 'artifact' | 'session';

export interface ServiceProcesses {
  /** What a service wrote on stderr and stdout so far (for a failing test's message). */
  output(name: PeerService): string;
  /** SIGTERM to each (or to `only`), then waits for them (SIGKILL after 5 s). */
  stop(only?: readonly PeerService[]): Promise<void>;
  /** Starts `name` again (stopped before) on the same data directory; resolves once it answers `_health`. */
  restart(name: PeerService): Promise<void>;
}

interface Running {
  readonly name: PeerService;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  output: string;
}

const READY_TIMEOUT_MS = 30_000;

/** Starts `names` and resolves once each answers `_health`. */
export async function startServiceProcesses(
  bus: Bus,
  options: {
    readonly natsUrl: string;
    readonly dataDir: string;
    readonly names: readonly PeerService[];
    readonly env?: Record<string, string>;
  },
): Promise<ServiceProcesses> {
  const rpc = createRpcClient(bus, { timeoutMs: 500 });
  const spawnService = (name: PeerService): Running => {
    const child = spawn(process.execPath, [join('services', name, 'src', 'main.ts')], {
      cwd: REPO,
      env: {
        ...process.env,
        NATS_URL: options.natsUrl,
        DATA_DIR: join(options.dataDir, name),
        LOG_LEVEL: 'warn',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const entry: Running = {
      name,
      child,
      output: '',
      exited: new Promise((done) => child.on('exit', () => done())),
    };
    const keep = (d: Buffer) => {
      entry.output = (entry.output + d.toString()).slice(-20_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    return entry;
  };
  const running: Running[] = options.names.map(spawnService);
  const stop = async (only?: readonly PeerService[]): Promise<void> => {
    await Promise.all(
      running.map(async (r) => {
        if (only !== undefined && !only.includes(r.name)) return;
        if (r.child.exitCode !== null || r.child.signalCode !== null) return;
        r.child.kill('SIGTERM');
        const timer = setTimeout(() => r.child.kill('SIGKILL'), 5_000);
        await r.exited;
        clearTimeout(timer);
      }),
    );
  };
  const identity = { tenant: 'probe', user: 'probe', session: 'probe', scopes: [] };
  const ready = async (r: Running): Promise<void> => {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      try {
        await rpc.call(r.name, '_health', identity, {});
        return;
      } catch (error) {
        if (r.child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`${r.name} did not start: ${r.output}`, { cause: error });
        }
        await new Promise((done) => setTimeout(done, 50));
      }
    }
  };
  try {
    await Promise.all(running.map(ready));
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    output: (name) => running.findLast((r) => r.name === name)?.output ?? '',
    stop,
    async restart(name) {
      await stop([name]);
      const entry = spawnService(name);
      running.push(entry);
      await ready(entry);
    },
  };
}
