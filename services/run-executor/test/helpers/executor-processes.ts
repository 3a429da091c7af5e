import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RpcClient } from '@ars/bus';

/**
 * Run-executors as separate processes (`node services/run-executor/src/main.ts`)
 * on the test's nats-server and one shared data directory, for tests that
 * kill one with SIGKILL in the middle of a run (or stop it with SIGTERM or
 * SIGSTOP) and let another take its runs over.
 */

const REPO = resolve(import.meta.dirname, '../../../..');
const MAIN = 'services/run-executor/src/main.ts';

/**
 * Short ack-wait and lease times, so that the runs of a killed executor are
 * redelivered to the next one within seconds rather than the defaults' minutes.
 */
const FAST_REDELIVERY = { EXECUTOR_ACK_WAIT_MS: '2000', EXECUTOR_LEASE_TTL_MS: '2000' };

const READY_TIMEOUT_MS = 30_000;
const PROBE = { tenant: 'probe', user: 'probe', session: 'probe', scopes: [] };

/** One executor process. */
export interface ExecutorProcess {
  /** The process itself, for other signals (SIGTERM, SIGSTOP, SIGCONT) and its exit code. */
  readonly child: ChildProcess;
  /** Resolves with the exit code once the process has ended (`null` when a signal ended it). */
  readonly exited: Promise<number | null>;
  /** What it wrote on stderr so far (its last 20,000 characters). */
  stderr(): string;
}

/** The executor processes of one test. */
export interface ExecutorProcesses {
  /** Starts an executor (with `env` on top of the shared one); resolves once an executor answers `_health`. */
  start(env?: Record<string, string>): Promise<ExecutorProcess>;
  /** SIGKILLs `executor`, waits for it to end, and starts another (with `env`) on the same data directory. */
  crashOver(executor: ExecutorProcess, env?: Record<string, string>): Promise<ExecutorProcess>;
  /** Each process's exit code and stderr, for a failing test's message. */
  report(): string;
  /** SIGKILLs every process started and waits for each to end. */
  stop(): Promise<void>;
}

/**
 * Executor processes on `natsUrl` sharing `dataDir`, with fast redelivery,
 * `LOG_LEVEL=warn` and `env`; `rpc` (on the same server) asks them for `_health`.
 * Nothing runs until `start`; `stop` belongs in the test's `afterEach`.
 */
export function executorProcesses(
  rpc: RpcClient,
  options: { readonly natsUrl: string; readonly dataDir: string; readonly env?: Record<string, string> },
): ExecutorProcesses {
  const started: ExecutorProcess[] = [];

  const spawnExecutor = (env: Record<string, string>): ExecutorProcess => {
    const child = spawn(process.execPath, [MAIN], {
      cwd: REPO,
      env: {
        ...process.env,
        NATS_URL: options.natsUrl,
        DATA_DIR: options.dataDir,
        LOG_LEVEL: 'warn',
        ...FAST_REDELIVERY,
        ...options.env,
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-20_000);
    });
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    return { child, exited, stderr: () => stderr };
  };

  const untilHealthy = async (executor: ExecutorProcess): Promise<void> => {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      try {
        await rpc.call('run-executor', '_health', PROBE, {}, { timeoutMs: 500 });
        return;
      } catch (error) {
        if (executor.child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`executor did not start: ${executor.stderr()}`, { cause: error });
        }
        await sleep(100);
      }
    }
  };

  const kill = async (executor: ExecutorProcess): Promise<void> => {
    executor.child.kill('SIGKILL');
    await executor.exited;
  };

  const start = async (env: Record<string, string> = {}): Promise<ExecutorProcess> => {
    const executor = spawnExecutor(env);
    started.push(executor);
    await untilHealthy(executor);
    return executor;
  };

  return {
    start,
    async crashOver(executor, env) {
      await kill(executor);
      return start(env);
    },
    report: () => started.map((e) => `[${e.child.exitCode}] ${e.stderr()}`).join('\n---\n'),
    async stop() {
      await Promise.all(started.splice(0).map(kill));
    },
  };
}
