import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root this CLI runs from. */
export const CONSOLE_REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Where the console's package lives, relative to the repository root. */
export const CONSOLE_DIR = 'apps/console';

/** What the console's build reads: a change to any of these makes `dist/` stale. */
const CONSOLE_INPUTS = [
  `${CONSOLE_DIR}/src`,
  `${CONSOLE_DIR}/index.html`,
  `${CONSOLE_DIR}/vite.config.ts`,
  `${CONSOLE_DIR}/tsconfig.json`,
  `${CONSOLE_DIR}/package.json`,
  'libs/client/src',
];

/** The outcome of {@link ensureConsoleBuilt}. */
export type ConsoleBuildResult =
  | { readonly status: 'fresh' }
  | { readonly status: 'built' }
  | { readonly status: 'absent'; readonly reason: string }
  | { readonly status: 'failed'; readonly output: string };

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/**
 * True when `apps/console/dist/index.html` is missing or older than any
 * source the build reads (modification times; one directory walk, no build).
 */
export function consoleBuildIsStale(rootDir: string): boolean {
  const index = join(rootDir, CONSOLE_DIR, 'dist', 'index.html');
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return CONSOLE_INPUTS.some((input) => newestMtime(join(rootDir, input)) > built);
}

/**
 * Builds the console (type-check, then `vite build` into `apps/console/dist`)
 * when its build is stale; quick when it is fresh. Absent when the repository
 * has no console package or its dependencies are not installed.
 */
export async function ensureConsoleBuilt(rootDir: string = CONSOLE_REPO_ROOT): Promise<ConsoleBuildResult> {
  const packageDir = join(rootDir, CONSOLE_DIR);
  if (!existsSync(join(packageDir, 'package.json')))
    return { status: 'absent', reason: `${CONSOLE_DIR} does not exist` };
  if (!consoleBuildIsStale(rootDir)) return { status: 'fresh' };
  const tsc = join(rootDir, 'node_modules', 'typescript', 'bin', 'tsc');
  const vite = join(packageDir, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(vite) || !existsSync(tsc)) {
    return { status: 'absent', reason: `the console's dependencies are not installed (run pnpm install)` };
  }
  const checked = await runNode(packageDir, [tsc, '-p', 'tsconfig.json']);
  if (checked.code !== 0) return { status: 'failed', output: checked.output };
  const built = await runNode(packageDir, [vite, 'build', '--logLevel', 'warn']);
  return built.code === 0 ? { status: 'built' } : { status: 'failed', output: built.output };
}

function runNode(cwd: string, args: readonly string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.once('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}
