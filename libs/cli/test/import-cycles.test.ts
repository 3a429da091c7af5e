import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { importCyclesPlugin } from '../src/lint/import-cycles.ts';

/**
 * `ars/no-import-cycle` against small workspaces written to a temporary
 * directory: each linted file is read from disk with its neighbours.
 */

const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function workspace(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'ars-cycles-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

/** The rule's messages for `path` in the workspace at `root`. */
async function cyclesIn(root: string, path: string, text: string): Promise<string[]> {
  const linter = new Linter({ cwd: root });
  const config = [
    {
      files: ['**/*.ts'],
      languageOptions: { parser: tseslint.parser },
      plugins: { ars: importCyclesPlugin },
      rules: { 'ars/no-import-cycle': 'error' as const },
    },
  ];
  return linter.verify(text, config, join(root, path)).map((m) => m.message);
}

describe('ars/no-import-cycle', () => {
  it('reports both imports of a two-module cycle, naming the path', async () => {
    const a = "import { b } from './b.ts';\nexport const a = () => b();\n";
    const root = await workspace({
      'a.ts': a,
      'b.ts': "import { a } from './a.ts';\nexport const b = () => 1;\nexport const c = a;\n",
    });
    expect(await cyclesIn(root, 'a.ts', a)).toEqual(['Import cycle: a.ts → b.ts → a.ts.']);
  });

  it('counts a type-only import as part of a cycle', async () => {
    const step = "import type { Run } from './run.ts';\nexport const step = (run: Run) => run;\n";
    const root = await workspace({
      'run.ts': "import { step } from './step.ts';\nexport class Run {}\nexport const go = step;\n",
      'step.ts': step,
    });
    expect(await cyclesIn(root, 'step.ts', step)).toEqual(['Import cycle: step.ts → run.ts → step.ts.']);
  });

  it('finds a longer cycle through a workspace package, by its exports', async () => {
    const a = "export { z } from '@x/lib';\nexport const a = 1;\n";
    const root = await workspace({
      'pnpm-workspace.yaml': 'packages:\n  - app\n  - libs/*\nonlyBuiltDependencies:\n  - esbuild\n',
      'app/package.json': '{"name":"app"}',
      'app/a.ts': a,
      'libs/x/package.json': '{"name":"@x/lib","exports":{".":"./src/index.ts"}}',
      'libs/x/src/index.ts': "export { z } from './z.ts';\n",
      'libs/x/src/z.ts': "import { a } from '../../../app/a.ts';\nexport const z = a;\n",
    });
    expect(await cyclesIn(root, 'app/a.ts', a)).toEqual([
      'Import cycle: app/a.ts → libs/x/src/index.ts → libs/x/src/z.ts → app/a.ts.',
    ]);
  });

  it('reports nothing for imports that only go one way', async () => {
    const top =
      "import { mid } from './mid.ts';\nimport type { Leaf } from './leaf.ts';\nexport const top: Leaf = mid;\n";
    const root = await workspace({
      'top.ts': top,
      'mid.ts': "import { leaf } from './leaf.ts';\nexport const mid = leaf;\n",
      'leaf.ts': 'export type Leaf = number;\nexport const leaf = 1;\n',
    });
    expect(await cyclesIn(root, 'top.ts', top)).toEqual([]);
  });
});
