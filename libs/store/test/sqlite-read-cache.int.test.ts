import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { observeTransactions, openStore } from '../src/index.ts';
import type { Store, StoreDocument } from '../src/index.ts';
import { readKey } from '../src/sqlite-read-cache.ts';
import { describeCollectionContract } from './collection-contract.ts';
import { keepingReads } from './keeping-reads.ts';

describeCollectionContract('embedded sqlite store keeping reads, on disk', { durable: true }, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'ars-store-cache-'));
  return {
    open: async () => keepingReads(await openStore({ dataDir, database: 'contract', engine: 'sqlite' })),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
});

interface Setting extends StoreDocument {
  _id: string;
  tenant: string;
  value: number;
  tags?: string[];
}

describe('embedded sqlite store keeping reads', () => {
  let dataDir: string;
  const stores: Store[] = [];
  let readTransactions = 0;

  const open = async (): Promise<Store> => {
    const store = await openStore({ dataDir, database: 'svc', engine: 'sqlite' });
    stores.push(store);
    return store;
  };

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ars-store-cache-'));
    readTransactions = 0;
    observeTransactions((kind) => {
      if (kind === 'read') readTransactions += 1;
    });
  });

  afterEach(async () => {
    observeTransactions(undefined);
    for (const store of stores.splice(0)) await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers a repeated read from memory, without a transaction, until the collection is written', async () => {
    const settings = (await open()).collection<Setting>('settings', { cacheReads: true });
    await settings.createIndex({ tenant: 1 });
    await settings.insertOne({ _id: 'a', tenant: 't', value: 1 });
    expect(await settings.find({ tenant: 't' })).toEqual([{ _id: 'a', tenant: 't', value: 1 }]);
    const afterFirst = readTransactions;
    expect(await settings.find({ tenant: 't' })).toEqual([{ _id: 'a', tenant: 't', value: 1 }]);
    expect(await settings.findOne({ tenant: 'nobody' })).toBeNull();
    expect(await settings.findOne({ tenant: 'nobody' })).toBeNull();
    // The second find and the second findOne were not read from the database.
    expect(readTransactions).toBe(afterFirst + 1);
    await settings.updateOne({ _id: 'a' }, { $set: { value: 2 } });
    expect(await settings.find({ tenant: 't' })).toEqual([{ _id: 'a', tenant: 't', value: 2 }]);
    await settings.insertOne({ _id: 'b', tenant: 'nobody', value: 3 });
    expect(await settings.findOne({ tenant: 'nobody' })).toMatchObject({ _id: 'b' });
    await settings.deleteOne({ _id: 'b' });
    expect(await settings.findOne({ tenant: 'nobody' })).toBeNull();
  });

  it('sees what another connection commits to the same database', async () => {
    const mine = (await open()).collection<Setting>('settings', { cacheReads: true });
    const theirs = (await open()).collection<Setting>('settings');
    await theirs.insertOne({ _id: 'a', tenant: 't', value: 1 });
    expect(await mine.findOne({ _id: 'a' })).toMatchObject({ value: 1 });
    expect(await mine.findOne({ _id: 'a' })).toMatchObject({ value: 1 });
    await theirs.updateOne({ _id: 'a' }, { $set: { value: 2 } });
    expect(await mine.findOne({ _id: 'a' })).toMatchObject({ value: 2 });
    // A commit to another collection of that database makes the kept reads stale too (they are read again).
    await (await open()).collection('other').insertOne({ _id: 'x' });
    expect(await mine.findOne({ _id: 'a' })).toMatchObject({ value: 2 });
  });

  it('hands out copies: changing a result changes nothing kept', async () => {
    const settings = (await open()).collection<Setting>('settings', { cacheReads: true });
    await settings.insertOne({ _id: 'a', tenant: 't', value: 1, tags: ['x'] });
    const first = await settings.findOne({ _id: 'a' });
    first!.value = 99;
    first!.tags!.push('changed');
    const second = await settings.findOne({ _id: 'a' });
    expect(second).toEqual({ _id: 'a', tenant: 't', value: 1, tags: ['x'] });
    second!.tags!.push('again');
    expect(await settings.findOne({ _id: 'a' })).toEqual({ _id: 'a', tenant: 't', value: 1, tags: ['x'] });
  });

  it('sees the writes of its own turn, and keeps nothing they could take back', async () => {
    const settings = (await open()).collection<Setting>('settings', { cacheReads: true });
    const inserted = settings.insertOne({ _id: 'a', tenant: 't', value: 1 });
    const seen = settings.findOne({ _id: 'a' });
    // The same turn: a write refused by the store (a taken _id) undoes only itself.
    const refused = settings.insertOne({ _id: 'a', tenant: 't', value: 2 });
    const [first, second] = await Promise.allSettled([inserted, refused]);
    expect(first.status).toBe('fulfilled');
    expect(second).toMatchObject({ status: 'rejected', reason: { name: 'DuplicateKeyError' } });
    expect(await seen).toMatchObject({ value: 1 });
    expect(await settings.findOne({ _id: 'a' })).toMatchObject({ value: 1 });
    await settings.updateOne({ _id: 'a' }, { $inc: { value: 1 } });
    expect(await settings.findOne({ _id: 'a' })).toMatchObject({ value: 2 });
  });

  it('keeps the reads of a collection only when asked, and tells apart reads with other options', async () => {
    const store = await open();
    const plain = store.collection<Setting>('plain');
    await plain.insertOne({ _id: 'a', tenant: 't', value: 1 });
    await plain.findOne({ tenant: 't' });
    await plain.findOne({ tenant: 't' });
    expect(readTransactions).toBe(2);
    const kept = store.collection<Setting>('kept', { cacheReads: true });
    await kept.insertMany([
      { _id: 'a', tenant: 't', value: 1 },
      { _id: 'b', tenant: 't', value: 2 },
    ]);
    expect((await kept.find({ tenant: 't' }, { sort: { value: -1 } })).map((s) => s._id)).toEqual(['b', 'a']);
    expect((await kept.find({ tenant: 't' }, { sort: { value: 1 } })).map((s) => s._id)).toEqual(['a', 'b']);
    expect(await kept.find({ tenant: 't' }, { projection: { value: 1 }, sort: { value: 1 } })).toEqual([
      { _id: 'a', value: 1 },
      { _id: 'b', value: 2 },
    ]);
    expect(await kept.findOne({ tenant: 't' }, { sort: { value: -1 } })).toMatchObject({ _id: 'b' });
  });

  it('keys only plain JSON reads: a RegExp, a Date or an undefined member is read every time', () => {
    expect(readKey('find', { tenant: 't', n: { $in: [1, 2] } }, {})).toBe(
      '["find",{"tenant":"t","n":{"$in":[1,2]}},{}]',
    );
    expect(readKey('find', { tenant: /t/ }, {})).toBeUndefined();
    expect(readKey('find', { at: new Date(0) }, {})).toBeUndefined();
    expect(readKey('find', { tenant: undefined }, {})).toBeUndefined();
    expect(readKey('find', { n: Number.NaN }, {})).toBeUndefined();
    expect(readKey('findOne', {}, { sort: { a: 1 } })).not.toBe(readKey('find', {}, { sort: { a: 1 } }));
  });
});
