import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

/** How a child process ended. */
export interface ExitInfo {
  /** Exit code; `null` when a signal ended it or it never started. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be spawned at all. */
  readonly error?: Error;
}

/** A line a child wrote. */
export type LineHandler = (stream: 'stdout' | 'stderr', line: string) => void;

/** What to run and where its output goes. */
export interface ServiceProcessOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly onLine: LineHandler;
  /** How many of the last output lines to keep for error messages. @default 30 */
  readonly keepLines?: number;
}

/** One supervised child process. */
export interface ServiceProcess {
  readonly name: string;
  readonly pid: number | undefined;
  /** `Date.now()` when it was spawned. */
  readonly startedAt: number;
  /** Resolves once the process has exited and its output is drained. */
  readonly exited: Promise<ExitInfo>;
  /** The exit, once known (synchronously). */
  readonly exitInfo: ExitInfo | undefined;
  /** The last output lines, oldest first (for error messages). */
  tail(): string[];
  /** Sends a signal; no-op once exited. */
  signal(signal: NodeJS.Signals): void;
  /** Sends `signal`, then SIGKILL after `graceMs`; resolves with the exit. */
  terminate(signal: NodeJS.Signals, graceMs: number): Promise<ExitInfo>;
}

/** A one-line description of an exit: `exited with code 1`, `was killed by SIGKILL`. */
export function describeExit(info: ExitInfo): string {
  if (info.error) return `could not start: ${info.error.message}`;
  if (info.signal) return `was killed by ${info.signal}`;
  return `exited with code ${info.code ?? 'unknown'}`;
}

/**
 * Spawns a child in its own process group, so that a terminal's Ctrl-C
 * reaches only the supervisor, which then stops the children in order.
 */
export function spawnServiceProcess(options: ServiceProcessOptions): ServiceProcess {
  const keep = options.keepLines ?? 30;
  const lines: string[] = [];
  const child: ChildProcess = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let exitInfo: ExitInfo | undefined;

  const record = (stream: 'stdout' | 'stderr', line: string): void => {
    lines.push(line);
    if (lines.length > keep) lines.shift();
    options.onLine(stream, line);
  };
  const drained = [
    readLines(child.stdout, (line) => record('stdout', line)),
    readLines(child.stderr, (line) => record('stderr', line)),
  ];

  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('error', (error) => {
      exitInfo = { code: null, signal: null, error };
      resolve(exitInfo);
    });
    child.once('exit', (code, signal) => {
      void Promise.all(drained).then(() => {
        exitInfo ??= { code, signal };
        resolve(exitInfo);
      });
    });
  });

  const signal = (sig: NodeJS.Signals): void => {
    if (exitInfo !== undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      child.kill(sig);
    } catch {
      // Already gone.
    }
  };

  return {
    name: options.name,
    pid: child.pid,
    startedAt: Date.now(),
    exited,
    get exitInfo() {
      return exitInfo;
    },
    tail: () => [...lines],
    signal,
    async terminate(sig, graceMs) {
      signal(sig);
      const controller = new AbortController();
      const late = sleep(graceMs, 'late' as const, { signal: controller.signal }).catch(() => 'aborted' as const);
      const first = await Promise.race([exited, late]);
      controller.abort();
      if (first === 'late') signal('SIGKILL');
      return exited;
    },
  };
}

function readLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): Promise<void> {
  if (!stream) return Promise.resolve();
  const reader = createInterface({ input: stream, crlfDelay: Infinity });
  reader.on('line', onLine);
  return new Promise((resolve) => reader.once('close', resolve));
}
