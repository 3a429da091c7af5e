import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isStoreError, openStore } from '../src/index.ts';
import type { Store, StoreError } from '../src/index.ts';
import { describeCollectionContract } from './collection-contract.ts';

async function temporaryDirectory(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'ars-store-'));
}

describeCollectionContract('embedded store on disk (nedb)', { durable: true }, async () => {
  const dataDir = await temporaryDirectory();
  return {
    open: () => openStore({ dataDir, database: 'contract', engine: 'nedb' }),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
});

describeCollectionContract('embedded store in memory (nedb)', { durable: false }, async () => ({
  open: () => openStore({ dataDir: '/nonexistent', database: 'contract', engine: 'nedb', inMemory: true }),
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

  it('reports the embedded kind, whose nedb engine serves no compound index', async () => {
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb' });
    expect(store.kind).toBe('embedded');
    expect(store.compoundIndexes).toBe(false);
  });

  it('keeps one datafile per collection under <dataDir>/<database>/<collection>.db', async () => {
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb' });
    await store.collection('tasks').insertOne({ _id: 't' });
    await store.collection('runs.archive').insertOne({ _id: 'r' });
    expect((await readdir(join(dataDir, 'svc'))).sort()).toEqual(['runs.archive.db', 'tasks.db']);
  });

  it('changes nothing in memory when the datafile cannot take a write, and writes again once it can', async () => {
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb' });
    const tasks = store.collection<{ _id: string; n: number }>('tasks');
    await tasks.createIndex({ n: 1 }, { unique: true });
    await tasks.insertOne({ _id: 'kept', n: 1 });
    await store.close();
    // The datafile replaced by a directory: every append fails (EISDIR), even as root.
    const file = join(dataDir, 'svc', 'tasks.db');
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb' });
    const again = store.collection<{ _id: string; n: number }>('tasks');
    expect(await again.countDocuments()).toBe(1);
    await rm(file);
    await mkdir(file);
    await expect(again.insertOne({ _id: 'new', n: 2 })).rejects.toSatisfy(isStoreError);
    await expect(again.updateOne({ _id: 'kept' }, { $set: { n: 3 } })).rejects.toSatisfy(isStoreError);
    await expect(again.deleteOne({ _id: 'kept' })).rejects.toSatisfy(isStoreError);
    expect(await again.find({})).toEqual([{ _id: 'kept', n: 1 }]);
    // The unique index was rolled back too: n 2 and 3 are free, n 1 is still taken.
    await rm(file, { recursive: true });
    await again.insertOne({ _id: 'new', n: 2 });
    await again.updateOne({ _id: 'kept' }, { $set: { n: 3 } });
    await expect(again.insertOne({ _id: 'dup', n: 3 })).rejects.toSatisfy(isStoreError);
    expect(await again.find({}, { sort: { n: 1 } })).toEqual([
      { _id: 'new', n: 2 },
      { _id: 'kept', n: 3 },
    ]);
    await store.close();
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb' });
    expect(await store.collection('tasks').find({}, { sort: { n: 1 } })).toEqual([
      { _id: 'new', n: 2 },
      { _id: 'kept', n: 3 },
    ]);
  });

  it('writes no file in memory', async () => {
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb', inMemory: true });
    await store.collection('tasks').insertOne({ _id: 't' });
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('compacts the datafile on close to one line per live document', async () => {
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb', compactionIntervalMs: 0 });
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
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb', compactionIntervalMs: 20 });
    const tasks = store.collection<{ _id: string; n: number }>('tasks');
    await tasks.insertOne({ _id: 'a', n: 0 });
    for (let i = 0; i < 3; i += 1) await tasks.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
    const file = join(dataDir, 'svc', 'tasks.db');
    await vi.waitFor(async () => expect(await lines(file)).toEqual(['{"_id":"a","n":3}']), { timeout: 5_000 });
  });

  it('reports a datafile it cannot load as a StoreError on every call, and a failed compaction to its handler', async () => {
    await rm(join(dataDir, 'svc'), { recursive: true, force: true });
    await openStore({ dataDir, database: 'svc', engine: 'nedb', compactionIntervalMs: 0 }).then((s) => s.close());
    await writeFile(join(dataDir, 'svc', 'broken.db'), 'not json\nstill not json\n{"_id":"ok"}\n');
    const failures: StoreError[] = [];
    store = await openStore({
      dataDir,
      database: 'svc',
      engine: 'nedb',
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

  it('has every acknowledged write in the datafile without a close (a crashed process loses none)', async () => {
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb', compactionIntervalMs: 0 });
    const tasks = store.collection<{ _id: string; n: number }>('tasks');
    await tasks.insertMany([
      { _id: 'a', n: 0 },
      { _id: 'b', n: 0 },
    ]);
    await tasks.updateOne({ _id: 'a' }, { $inc: { n: 2 } });
    await tasks.deleteOne({ _id: 'b' });
    const restarted = await openStore({ dataDir, database: 'svc', engine: 'nedb', compactionIntervalMs: 0 });
    try {
      expect(await restarted.collection('tasks').find({})).toEqual([{ _id: 'a', n: 2 }]);
    } finally {
      await restarted.close();
    }
  });

  it('drops a torn last line left by a crash, reports it, and appends after it', async () => {
    await mkdir(join(dataDir, 'svc'), { recursive: true });
    const file = join(dataDir, 'svc', 'tasks.db');
    // One sound line and a torn one: 50% corrupt, which nedb alone refuses to load.
    await writeFile(file, '{"_id":"a","n":1}\n{"_id":"b","n":');
    const reports: StoreError[] = [];
    store = await openStore({
      dataDir,
      database: 'svc',
      engine: 'nedb',
      compactionIntervalMs: 0,
      onBackgroundError: (e) => reports.push(e),
    });
    const tasks = store.collection<{ _id: string; n: number }>('tasks');
    expect(await tasks.find({})).toEqual([{ _id: 'a', n: 1 }]);
    expect(reports.map((e) => e.message)).toEqual([expect.stringContaining('torn last line')]);
    await tasks.insertOne({ _id: 'c', n: 3 });
    const restarted = await openStore({ dataDir, database: 'svc', engine: 'nedb', compactionIntervalMs: 0 });
    try {
      expect(await restarted.collection('tasks').find({}, { sort: { _id: 1 } })).toEqual([
        { _id: 'a', n: 1 },
        { _id: 'c', n: 3 },
      ]);
    } finally {
      await restarted.close();
    }
  });

  it('keeps a complete last line that lacks its newline and appends on a line of its own', async () => {
    await mkdir(join(dataDir, 'svc'), { recursive: true });
    await writeFile(join(dataDir, 'svc', 'tasks.db'), '{"_id":"a","n":1}');
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb', compactionIntervalMs: 0 });
    await store.collection<{ _id: string; n: number }>('tasks').insertOne({ _id: 'b', n: 2 });
    expect(await lines(join(dataDir, 'svc', 'tasks.db'))).toEqual(['{"_id":"a","n":1}', '{"_id":"b","n":2}']);
  });

  it('appends to the new datafile once a background compaction replaced it', async () => {
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb', compactionIntervalMs: 20 });
    const tasks = store.collection<{ _id: string; n: number }>('tasks');
    await tasks.insertOne({ _id: 'a', n: 0 });
    await tasks.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
    const file = join(dataDir, 'svc', 'tasks.db');
    await vi.waitFor(async () => expect(await lines(file)).toEqual(['{"_id":"a","n":1}']), { timeout: 5_000 });
    await tasks.insertOne({ _id: 'b', n: 0 });
    await vi.waitFor(
      async () => expect((await lines(file)).sort()).toEqual(['{"_id":"a","n":1}', '{"_id":"b","n":0}']),
      {
        timeout: 5_000,
      },
    );
  });

  it('writes plain documents as JSON lines and a Date as nedb does, readable after a restart', async () => {
    store = await openStore({ dataDir, database: 'svc', engine: 'nedb', compactionIntervalMs: 0 });
    const at = new Date('2026-01-02T03:04:05.678Z');
    await store.collection<{ _id: string; list?: unknown[]; n?: number; at?: Date }>('tasks').insertMany([
      { _id: 'plain', list: [1, null, { deep: 'x' }], n: 1.5 },
      { _id: 'dated', at },
    ]);
    expect(await lines(join(dataDir, 'svc', 'tasks.db'))).toEqual([
      '{"_id":"plain","list":[1,null,{"deep":"x"}],"n":1.5}',
      `{"_id":"dated","at":{"$$date":${at.getTime()}}}`,
    ]);
    const restarted = await openStore({ dataDir, database: 'svc', engine: 'nedb', compactionIntervalMs: 0 });
    try {
      expect(await restarted.collection('tasks').findOne({ _id: 'dated' })).toEqual({ _id: 'dated', at });
    } finally {
      await restarted.close();
    }
  });

  it('refuses a negative flush period', async () => {
    await expect(openStore({ dataDir, database: 'svc', engine: 'nedb', syncIntervalMs: -1 })).rejects.toSatisfy(
      isStoreError,
    );
  });

  it('refuses an invalid database name', async () => {
    for (const database of ['', '..', 'a/b', 'a.b', 'x'.repeat(64)]) {
      await expect(openStore({ dataDir, database })).rejects.toSatisfy(isStoreError);
    }
  });
});
