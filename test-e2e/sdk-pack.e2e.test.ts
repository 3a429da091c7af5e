import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestSystem } from '@ars/testkit';
import { pack } from '../libs/client/scripts/pack.ts';

/**
 * The SDK as a user gets it: built and packed (`npm pack`), installed from
 * the tarball into an empty project (offline: the tarball has no
 * dependencies), then used from plain Node.js by the README's "The SDK"
 * script, as written, against the running system; and type-checked from a
 * TypeScript file against the installed `.d.ts`.
 */

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The first ```js block of the README's "## The SDK" section. */
async function readmeScript(): Promise<string> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## The SDK\n');
  expect(start, 'README.md has a "## The SDK" section').toBeGreaterThan(-1);
  const section = readme.slice(start + 1, readme.indexOf('\n## ', start + 1));
  const match = /```js\n([\s\S]*?)```/.exec(section);
  expect(match, 'the SDK section has a ```js block').not.toBeNull();
  return match![1]!;
}

describe('the packed SDK', () => {
  let sys: TestSystem;
  let work: string;
  let project: string;
  let tarball: string;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'ars-sdk-'));
    const [system, packed] = await Promise.all([
      startTestSystem({ mode: 'one-process' }),
      pack(path.join(work, 'dist'), work),
    ]);
    sys = system;
    tarball = packed;
    project = path.join(work, 'app');
    await mkdir(project);
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'sdk-user', private: true, type: 'module' }),
    );
    await run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
      cwd: project,
    });
  });

  afterAll(async () => {
    await sys?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('packs a tarball without dependencies, with JavaScript and .d.ts only', async () => {
    const { stdout } = await run('tar', ['tzf', tarball]);
    const files = stdout.trim().split('\n');
    expect(files).toContain('package/index.js');
    expect(files).toContain('package/index.d.ts');
    expect(files).toContain('package/browser.js');
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    const manifest = JSON.parse(
      await readFile(path.join(project, 'node_modules', '@ars', 'client', 'package.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(manifest['dependencies']).toBeUndefined();
    expect(manifest['private']).toBeUndefined();
    expect(manifest['exports']).toMatchObject({ '.': { types: './index.d.ts', browser: './browser.js' } });
  });

  it('keeps node: imports out of the browser entry', async () => {
    const installed = path.join(project, 'node_modules', '@ars', 'client');
    const seen = new Set<string>();
    const pending = ['browser.js'];
    while (pending.length > 0) {
      const file = pending.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const text = await readFile(path.join(installed, file), 'utf8');
      const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      expect(code, file).not.toMatch(/from\s+['"]node:|import\(['"]node:/);
      for (const [, spec] of code.matchAll(/from\s+['"](\.[^'"]+)['"]/g)) {
        pending.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), spec!)));
      }
    }
    expect(seen.has('client.js')).toBe(true);
    expect(seen.has('transport.js')).toBe(false);
  });

  it("runs the README's script from plain Node.js: a typed call, runUntilDone, subscribe, a typed error", async () => {
    const identity = uniqueIdentity('sdk');
    const token = await mintToken(sys.baseUrl, { ...identity, scopes: [] });
    const script = path.join(project, 'sdk-demo.mjs');
    await writeFile(script, await readmeScript());
    const { stdout } = await run(process.execPath, [script], {
      cwd: project,
      env: { ...process.env, ARS_URL: sys.baseUrl, ARS_TOKEN: token },
      timeout: 30_000,
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^protocol \d+\.\d+\.\d+$/);
    const events = lines.filter((l) => l.startsWith('event ')).map((l) => l.split(' ')[2]);
    expect(events[0]).toBe('task.spawned');
    expect(events).toContain('tool.invoked');
    expect(events.at(-1)).toBe('task.completed');
    const sequences = lines.filter((l) => l.startsWith('event ')).map((l) => Number(l.split(' ')[1]));
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(lines).toContainEqual(expect.stringMatching(/^run \S+ completed$/));
    expect(lines).toContain('task status complete');
    expect(lines).toContain(`replayed up to ${sequences.at(-1)}`);
    expect(lines.at(-1)).toBe('error not_found 404 retryable=false');
  });

  it('type-checks a TypeScript user against the installed .d.ts', async () => {
    const source = [
      `import { createClient, isArsError } from '@ars/client';`,
      `import type { ArsError, EventFrame, TaskDetail } from '@ars/client';`,
      `const client = createClient({ baseUrl: 'http://127.0.0.1:1' });`,
      `export async function use(): Promise<string> {`,
      `  const detail: TaskDetail = await client.tasks.get({ task_id: 't' });`,
      `  const runs = await client.flows.runs.list({ filter: { flow_id: 'f' } });`,
      `  const paused = await client.pause.list();`,
      `  await client.pause({ identity: { run: detail.task.task_id }, payload: { reason: 'r' } });`,
      `  for await (const frame of client.events.subscribe({ run: 'r' })) { const f: EventFrame = frame; void f; }`,
      `  const outcome = await client.runUntilDone({ query: 'q' });`,
      `  try { await client.start({ query: 'q' }); } catch (e) { if (isArsError(e, 'not_found')) { const c: 'not_found' = e.code; void c; } }`,
      `  const n: number = runs.items.length + paused.items.length;`,
      `  // @ts-expect-error task_id is required`,
      `  await client.tasks.get({});`,
      `  // @ts-expect-error no such method`,
      `  await client.tasks.nope();`,
      `  const e: ArsError | undefined = undefined; void e;`,
      `  return detail.task.status + n + outcome.status;`,
      `}`,
    ].join('\n');
    await writeFile(path.join(project, 'use.ts'), source);
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
        },
        files: ['use.ts'],
      }),
    );
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project }).catch(
      (error: { stdout?: string }) => ({ stdout: `tsc failed:\n${error.stdout ?? String(error)}` }),
    );
    expect(result.stdout).toBe('');
  });
});
