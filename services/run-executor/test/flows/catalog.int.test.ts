import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '@ars/telemetry';
import { createFlowCatalog } from '../../src/flows/catalog.ts';
import type { FlowCatalog } from '../../src/flows/catalog.ts';

/** The flow catalog over a real directory (file I/O only: no server). */

const flow = (answer: string) => `steps:\n  - id: a\n    type: run\n    query: "#script finish:${answer}"\n`;
const logger = createLogger({ name: 'catalog-test', level: 'silent' });

describe('the flow catalog', () => {
  let dir: string;
  let catalog: FlowCatalog | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-flow-catalog-'));
  });

  afterEach(async () => {
    await catalog?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const open = async () => (catalog = await createFlowCatalog({ dir, reloadMs: 3_600_000, logger }));

  it('loads tenant directories and top-level files naming their tenant', async () => {
    await mkdir(join(dir, 'acme'));
    await writeFile(join(dir, 'acme', 'one.yaml'), flow('1'));
    await writeFile(join(dir, 'two.yml'), `tenant: acme\n${flow('2')}`);
    await writeFile(join(dir, 'acme', 'notes.txt'), 'not a flow');
    const c = await open();
    expect(c.list().map((f) => [f.tenant, f.flow_id])).toEqual([
      ['acme', 'one'],
      ['acme', 'two'],
    ]);
    expect(c.list(['globex'])).toEqual([]);
  });

  it('follows the links of a mounted ConfigMap and skips its hidden directories', async () => {
    const data = join(dir, '..2024_01_01');
    await mkdir(join(data, 'acme'), { recursive: true });
    await writeFile(
      join(data, 'acme', 'mounted.json'),
      JSON.stringify({ steps: [{ id: 'a', type: 'run', query: 'q' }] }),
    );
    await symlink(data, join(dir, '..data'));
    await symlink(join('..data', 'acme'), join(dir, 'acme'));
    const c = await open();
    expect(c.list().map((f) => f.flow_id)).toEqual(['mounted']);
  });

  it('keeps a bad file as an invalid flow with its problems, and goes on loading the rest', async () => {
    await mkdir(join(dir, 'acme'));
    await writeFile(join(dir, 'acme', 'bad.json'), '{"steps": [{"id": "A", "type": "run", "query": "q"}]}');
    await writeFile(join(dir, 'acme', 'good.yaml'), flow('ok'));
    const c = await open();
    expect(c.get('acme', 'bad')?.definition).toBeUndefined();
    expect(c.get('acme', 'bad')?.problems?.[0]).toMatch(/^steps\.0\.id/);
    expect(c.get('acme', 'good')?.definition).toBeDefined();
  });

  it('picks up a changed file as a new version, and drops a removed one, on reload', async () => {
    await mkdir(join(dir, 'acme'));
    await writeFile(join(dir, 'acme', 'f.yaml'), flow('v1'));
    const c = await open();
    const v1 = c.get('acme', 'f')?.version;
    await writeFile(join(dir, 'acme', 'f.yaml'), flow('v2'));
    await c.reload();
    const v2 = c.get('acme', 'f')?.version;
    expect(v2).not.toBe(v1);
    await rm(join(dir, 'acme', 'f.yaml'));
    await c.reload();
    expect(c.get('acme', 'f')).toBeUndefined();
  });

  it('is empty without a directory, and keeps what it had when the directory goes away', async () => {
    const none = await createFlowCatalog({ dir: undefined, reloadMs: 1_000, logger });
    expect(none.list()).toEqual([]);
    await none.stop();
    await mkdir(join(dir, 'acme'));
    await writeFile(join(dir, 'acme', 'f.yaml'), flow('v1'));
    const c = await open();
    await rm(dir, { recursive: true, force: true });
    await c.reload();
    expect(c.get('acme', 'f')).toBeDefined();
  });
});
