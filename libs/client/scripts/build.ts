/**
 * Builds the publishable SDK into an output directory (default `.tmp/sdk/dist`
 * at the workspace root: ignored by git and by the linter): tsc emits ES2022 JavaScript and
 * `.d.ts` (relative `.ts` imports rewritten to `.js`), then this script
 * writes its `package.json`, the publish manifest: no dependencies (the
 * contract is generated into `src/generated/contract.ts`), an exports map with
 * `types`, `browser` and `default` conditions. The workspace's own
 * `package.json` keeps pointing at `src/index.ts`, so that the workspace runs
 * the sources without a build.
 *
 *   node libs/client/scripts/build.ts [--out-dir DIR]
 */
import { execFileSync } from 'node:child_process';
import { copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_OUT_DIR = path.resolve(PACKAGE_DIR, '..', '..', '.tmp', 'sdk', 'dist');

/** The publish manifest, derived from the workspace manifest. */
export function publishManifest(workspace: { name: string; version: string }): Record<string, unknown> {
  return {
    name: workspace.name,
    version: workspace.version,
    description: 'TypeScript SDK of the Agent Run Service: typed calls, a resumable event stream, runUntilDone',
    license: 'UNLICENSED',
    type: 'module',
    engines: { node: '>=20' },
    sideEffects: false,
    exports: {
      '.': {
        types: './index.d.ts',
        browser: './browser.js',
        default: './index.js',
      },
      './browser': { types: './browser.d.ts', default: './browser.js' },
      './package.json': './package.json',
    },
    main: './index.js',
    types: './index.d.ts',
    files: ['**/*.js', '**/*.d.ts', 'README.md'],
  };
}

/** Builds into `outDir` (emptied first); returns it. */
export async function build(outDir: string = DEFAULT_OUT_DIR): Promise<string> {
  await rm(outDir, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(PACKAGE_DIR, 'tsconfig.build.json'), '--outDir', outDir], {
    stdio: 'inherit',
  });
  const workspace = JSON.parse(await readFile(path.join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  await writeFile(path.join(outDir, 'package.json'), `${JSON.stringify(publishManifest(workspace), null, 2)}\n`);
  await copyFile(path.join(PACKAGE_DIR, 'README.md'), path.join(outDir, 'README.md'));
  return outDir;
}

/** The value of `--name VALUE` on the command line. */
export function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = await build(path.resolve(option('--out-dir') ?? DEFAULT_OUT_DIR));
  process.stdout.write(`built ${outDir}\n`);
}
