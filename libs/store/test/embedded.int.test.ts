import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isStoreError, openStore } from '../src/index.ts';
import type { Store, StoreError } from '../src/index.ts';
import { describeCollectionContract } from './collection-contract.ts';

async function temporaryDirectory(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'ars-store-'));
}

describeCollectionContract('embedded store on disk', async () => {
  const dataDir = await temporaryDirectory();
  return {
    durable: true,
    open: () => openStore({ dataDir, database: 'contract' }),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
});

describeCollectionContract('embedded store in memory', async () => ({
  durable: false,
  open: () => openStore({ dataDir: '/nonexistent', database: 'contract', inMemory: true }),
  cleanup: async () => undefined,
}));

async function lines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
}

describe('embedded store files', () => {
  let dataDir: string;
  let store: Store | undefined;

  beforeEach(async () => {
    dataDir = await temporaryDirectory();
  });

  afterEach(async () => {
    await store?.close().catch(() => undefined);
    store = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  it('reports the embedded kind', async () => {
    store = await openStore({ dataDir, database: 'svc' });
    expect(store.kind).toBe('embedded');
  });

  it('keeps one datafile per collection under <dataDir>/<database>/<collection>.db', async () => {
    store = await openStore({ dataDir, database: 'svc' });
    await store.collection('tasks').insertOne({ _id: 't' });
    await store.collection('runs.archive').insertOne({ _id: 'r' });
    expect((await readdir(join(dataDir, 'svc'))).sort()).toEqual(['runs.archive.db', 'tasks.db']);
  });

  it('writes no file in memory', async () => {
    store = await openStore({ dataDir, database: 'svc', inMemory: true });
    await store.collection('tasks').insertOne({ _id: 't' });
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('compacts the datafile on close to one line per live document', async () => {
    store = await openStore({ dataDir, database: 'svc', compactionIntervalMs: 0 });
    const tasks = store.collection<{ _id: string; n: number }>('tasks');
    await tasks.insertMany([
      { _id: 'a', n: 0 },
      { _id: 'b', n: 0 },
    ]);
    for (let i = 0; i < 5; i += 1) await tasks.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
    await tasks.deleteOne({ _id: 'b' });
    const file = join(dataDir, 'svc', 'tasks.db');
    expect((await lines(file)).length).toBe(8);
    await store.close();
    expect(await lines(file)).toEqual(['{"_id":"a","n":5}']);
  });

  it('compacts datafiles periodically at the configured interval', async () => {
    store = await openStore({ dataDir, database: 'svc', compactionIntervalMs: 20 });
    const tasks = store.collection<{ _id: string; n: number }>('tasks');
    await tasks.insertOne({ _id: 'a', n: 0 });
    for (let i = 0; i < 3; i += 1) await tasks.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
    const file = join(dataDir, 'svc', 'tasks.db');
    await vi.waitFor(async () => expect(await lines(file)).toEqual(['{"_id":"a","n":3}']), { timeout: 5_000 });
  });

  it('reports a datafile it cannot load as a StoreError on every call, and a failed compaction to its handler', async () => {
    await rm(join(dataDir, 'svc'), { recursive: true, force: true });
    await openStore({ dataDir, database: 'svc', compactionIntervalMs: 0 }).then((s) => s.close());
    await writeFile(join(dataDir, 'svc', 'broken.db'), 'not json\nstill not json\n{"_id":"ok"}\n');
    const failures: StoreError[] = [];
    store = await openStore({
      dataDir,
      database: 'svc',
      compactionIntervalMs: 20,
      onBackgroundError: (e) => failures.push(e),
    });
    const error = await store
      .collection('broken')
      .find({})
      .catch((caught: unknown) => caught);
    expect(isStoreError(error)).toBe(true);
    await expect(store.collection('broken').insertOne({ _id: 'x' })).rejects.toSatisfy(isStoreError);
    await vi.waitFor(() => expect(failures.length).toBeGreaterThan(0), { timeout: 5_000 });
    expect(failures[0]?.retryable).toBe(true);
  });

  it('refuses an invalid database name', async () => {
    for (const database of ['', '..', 'a/b', 'a.b', 'x'.repeat(64)]) {
      await expect(openStore({ dataDir, database })).rejects.toSatisfy(isStoreError);
    }
  });
});
