import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isStoreError, observeTransactions, openStore } from '../src/index.ts';
import type { Store, StoreDocument } from '../src/index.ts';
import { describeCollectionContract } from './collection-contract.ts';
import { keepingReads } from './keeping-reads.ts';

describeCollectionContract('embedded sqlite store held by its process alone', { durable: true }, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'ars-store-exclusive-'));
  return {
    open: () => openStore({ dataDir, database: 'contract', engine: 'sqlite', exclusive: true }),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
});

describeCollectionContract('embedded sqlite store held alone, keeping reads', { durable: true }, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'ars-store-exclusive-'));
  return {
    open: async () =>
      keepingReads(await openStore({ dataDir, database: 'contract', engine: 'sqlite', exclusive: true })),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
});

interface Setting extends StoreDocument {
  _id: string;
  value: number;
}

describe('embedded sqlite store held by its process alone', () => {
  let dataDir: string;
  const stores: Store[] = [];
  const open = async (exclusive: boolean): Promise<Store> => {
    const store = await openStore({ dataDir, database: 'svc', engine: 'sqlite', exclusive });
    stores.push(store);
    return store;
  };
  const file = () => join(dataDir, 'svc', 'store.sqlite');

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ars-store-exclusive-'));
  });

  afterEach(async () => {
    observeTransactions(undefined);
    for (const store of stores.splice(0)) await store.close().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('settles a write inside the turn when asked to commit soon, and at the end of the turn without', async () => {
    const store = await open(true);
    const settings = store.collection<Setting>('settings');
    await settings.insertOne({ _id: 'warm', value: 0 });
    const insideTurn = async (id: string, soon: boolean) => {
      let immediateRan = false;
      setImmediate(() => (immediateRan = true));
      const inserted = settings.insertOne({ _id: id, value: 1 });
      if (soon) store.commitSoon();
      await inserted;
      return !immediateRan;
    };
    expect(await insideTurn('a', false)).toBe(false);
    expect(await insideTurn('b', true)).toBe(true);
    expect(await settings.countDocuments()).toBe(3);
  });

  it('locks every other connection out while open, and keeps its log index in memory (no -shm file)', async () => {
    const settings = (await open(true)).collection<Setting>('settings');
    await settings.insertOne({ _id: 'a', value: 1 });
    expect(existsSync(`${file()}-shm`)).toBe(false);
    const other = new DatabaseSync(file(), { timeout: 0 });
    try {
      expect(() => other.prepare('SELECT count(*) FROM sqlite_schema').get()).toThrow(/locked/);
    } finally {
      other.close();
    }
  });

  it('leaves its data to whoever opens the directory after it closed, shared or alone', async () => {
    const first = await open(true);
    await first.collection<Setting>('settings').insertMany([
      { _id: 'a', value: 1 },
      { _id: 'b', value: 2 },
    ]);
    await first.close();
    const shared = await open(false);
    expect(await shared.collection<Setting>('settings').find({}, { sort: { _id: 1 } })).toEqual([
      { _id: 'a', value: 1 },
      { _id: 'b', value: 2 },
    ]);
    await shared.collection<Setting>('settings').updateOne({ _id: 'a' }, { $inc: { value: 10 } });
    await shared.close();
    const again = await open(true);
    expect(await again.collection<Setting>('settings').findOne({ _id: 'a' })).toEqual({ _id: 'a', value: 11 });
  });

  it('answers kept reads without a transaction, and rereads after a write and after a refused one', async () => {
    let reads = 0;
    observeTransactions((kind) => {
      if (kind === 'read') reads += 1;
    });
    const settings = (await open(true)).collection<Setting>('settings', { cacheReads: true });
    await settings.insertOne({ _id: 'a', value: 1 });
    const query = { value: { $gte: 0 } };
    expect(await settings.find(query)).toEqual([{ _id: 'a', value: 1 }]);
    const afterFirst = reads;
    expect(await settings.find(query)).toEqual([{ _id: 'a', value: 1 }]);
    expect(reads).toBe(afterFirst);
    await settings.updateOne({ _id: 'a' }, { $set: { value: 2 } });
    expect(await settings.find(query)).toEqual([{ _id: 'a', value: 2 }]);
    // A refused write in the same turn as an accepted one: the batch goes on, what is kept is reread.
    const [accepted, refused] = await Promise.allSettled([
      settings.insertOne({ _id: 'b', value: 3 }),
      settings.insertOne({ _id: 'a', value: 9 }),
    ]);
    expect(accepted.status).toBe('fulfilled');
    expect(refused).toMatchObject({ status: 'rejected', reason: { name: 'DuplicateKeyError' } });
    expect(await settings.find(query, { sort: { _id: 1 } })).toEqual([
      { _id: 'a', value: 2 },
      { _id: 'b', value: 3 },
    ]);
  });

  it('refuses, with a retryable error naming the file, a store opened while another holds it', async () => {
    await (await open(true)).collection<Setting>('settings').insertOne({ _id: 'a', value: 1 });
    const refusal = await openStore({ dataDir, database: 'svc', engine: 'sqlite' }).then(
      (store) => {
        stores.push(store);
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(isStoreError(refusal)).toBe(true);
    expect(refusal).toMatchObject({ retryable: true });
    expect((refusal as Error).message).toBe(`cannot open the embedded database ${file()}: another process holds it`);
  }, 40_000);
});
