import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The `ars` command's entry, as the root `./ars` wrapper runs it. */
export const CLI_MAIN = path.join(ROOT, 'libs', 'cli', 'src', 'main.ts');

/** How a finished `ars` process ended. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A running `ars` process: its output so far, and a wait for a piece of it. */
export interface CliProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the stdout so far once `pattern` matches it (rejects if the process exits first). */
  waitForOutput(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Resolves when the process has exited. */
  readonly done: Promise<CliResult>;
}

/**
 * The environment of a CLI process: the test's own, less the color switches
 * (so that a pipe gets plain text), plus `env`.
 */
export function cliEnv(env: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base['FORCE_COLOR'];
  delete base['NO_COLOR'];
  return { ...base, ...env };
}

/** Starts `node libs/cli/src/main.ts <args>` with `env` (ARS_URL, ARS_TOKEN, …). */
export function startCli(args: readonly string[], env: Readonly<Record<string, string>>): CliProcess {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { cwd: ROOT, env: cliEnv(env), stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
    for (const check of waiters) check();
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      for (const check of waiters) check();
      resolve({ code, stdout, stderr });
    });
  });
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
    waitForOutput(pattern) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const match = pattern.exec(stdout);
          if (match) {
            waiters.delete(check);
            resolve(match);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            waiters.delete(check);
            reject(new Error(`ars exited before printing ${String(pattern)}:\n${stdout}\n${stderr}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** Runs `ars <args>` to its end. */
export function runCli(args: readonly string[], env: Readonly<Record<string, string>>): Promise<CliResult> {
  return startCli(args, env).done;
}

/** One fenced code block of the README: its language and its text. */
export interface ReadmeBlock {
  readonly lang: string;
  readonly code: string;
}

/** The fenced code blocks of the README's `## <title>` section, in order. */
export async function readmeBlocks(title: string): Promise<ReadmeBlock[]> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start === -1) throw new Error(`README.md has no "## ${title}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start + 1, end === -1 ? undefined : end);
  return [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

/**
 * A temporary directory holding an executable `ars` that runs the CLI as the
 * root wrapper does (without its toolchain checks), so that a README block's
 * `./ars …` lines run as written from there.
 */
export async function arsShimDir(): Promise<{ readonly dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ars-cli-'));
  const shim = path.join(dir, 'ars');
  await writeFile(shim, `#!/usr/bin/env bash\nexec '${process.execPath}' '${CLI_MAIN}' "$@"\n`);
  await chmod(shim, 0o755);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Runs a shell block with bash in `cwd` (stops at the first failing line). */
export function runShell(code: string, cwd: string, env: Readonly<Record<string, string>>): Promise<CliResult> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', code], { cwd, env: cliEnv(env), stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
