import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { ensureConsoleBuilt } from '../console-build.ts';
import { EXIT } from '../io.ts';
import type { Io } from '../io.ts';

const ESLINT_CONFIGS = [
  'eslint.config.js',
  'eslint.config.mjs',
  'eslint.config.cjs',
  'eslint.config.ts',
  'eslint.config.mts',
  'eslint.config.cts',
];

interface Step {
  readonly title: string;
  readonly script: string;
  readonly args: readonly string[];
}

/** The steps of `ars test`, in order; eslint only when the root has a config. */
export function testSteps(rootDir: string, vitestArgs: readonly string[]): Step[] {
  const steps: Step[] = [
    { title: 'tsc -p tsconfig.json', script: 'node_modules/typescript/bin/tsc', args: ['-p', 'tsconfig.json'] },
  ];
  if (ESLINT_CONFIGS.some((file) => existsSync(join(rootDir, file)))) {
    steps.push({ title: 'eslint .', script: 'node_modules/eslint/bin/eslint.js', args: ['.'] });
  }
  steps.push({
    title: ['vitest run', ...vitestArgs].join(' '),
    script: 'node_modules/vitest/vitest.mjs',
    args: ['run', ...vitestArgs],
  });
  return steps;
}

/**
 * `ars test`: type-check, lint, then every vitest project (unit, int, e2e),
 * each under a header, from the repo root; stops at the first failure and
 * exits with its code. Extra arguments go to vitest.
 */
export async function testCommand(io: Io, rootDir: string, vitestArgs: readonly string[]): Promise<number> {
  const started = Date.now();
  // The e2e tests drive the built console: build it first when its dist is missing or stale.
  const consoleBuild = await ensureConsoleBuilt(rootDir);
  if (consoleBuild.status === 'built') io.stdout('ars test: built the console (apps/console/dist)\n');
  if (consoleBuild.status === 'absent') io.stderr(`ars test: console not built: ${consoleBuild.reason}\n`);
  if (consoleBuild.status === 'failed') {
    io.stderr(`${consoleBuild.output}\nars test: the console's type-check or build failed\n`);
    return EXIT.failure;
  }
  for (const step of testSteps(rootDir, vitestArgs)) {
    io.stdout(`\n=== ${step.title}\n`);
    const stepStarted = Date.now();
    const code = await run(rootDir, step);
    if (code !== 0) {
      io.stderr(`\nars test: "${step.title}" failed (exit ${code})\n`);
      return code;
    }
    io.stdout(`--- ${step.title}: ok in ${seconds(Date.now() - stepStarted)}\n`);
  }
  io.stdout(`\nars test: all passed in ${seconds(Date.now() - started)}\n`);
  return EXIT.ok;
}

function run(rootDir: string, step: Step): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(rootDir, step.script), ...step.args], {
      cwd: rootDir,
      stdio: 'inherit',
    });
    child.once('error', () => resolve(EXIT.failure));
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 + signalNumber(signal) : EXIT.failure)));
  });
}

function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 1;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
