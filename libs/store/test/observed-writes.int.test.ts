import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isDuplicateKeyError, observeWrites, openStore } from '../src/index.ts';
import type { Store } from '../src/index.ts';

describe('a store observing writes', () => {
  let dir: string | undefined;
  let inner: Store | undefined;
  afterEach(async () => {
    await inner?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function observed(): Promise<{ store: Store; told: string[] }> {
    dir = await mkdtemp(join(tmpdir(), 'ars-observed-'));
    inner = await openStore({ dataDir: dir, database: 'observed', engine: 'sqlite' });
    const told: string[] = [];
    return { store: observeWrites(inner, ['watched'], (name) => told.push(name)), told };
  }

  it('tells of every write to a named collection once it settled, before its caller resumes', async () => {
    const { store, told } = await observed();
    const watched = store.collection<{ _id: string; n: number }>('watched');
    await watched.insertOne({ _id: 'a', n: 1 });
    expect(told).toEqual(['watched']);
    await watched.insertMany([{ _id: 'b', n: 1 }]);
    await watched.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
    await watched.updateMany({}, { $inc: { n: 1 } });
    await watched.findOneAndUpdate({ _id: 'a' }, { $set: { n: 0 } });
    await watched.deleteOne({ _id: 'b' });
    await watched.deleteMany({});
    expect(told).toHaveLength(7);
    expect(await watched.countDocuments()).toBe(0);
  });

  it('tells of a refused write too, and passes its failure on', async () => {
    const { store, told } = await observed();
    const watched = store.collection<{ _id: string }>('watched');
    await watched.insertOne({ _id: 'a' });
    const failure = await watched.insertOne({ _id: 'a' }).catch((error: unknown) => error);
    expect(isDuplicateKeyError(failure)).toBe(true);
    expect(told).toEqual(['watched', 'watched']);
  });

  it('tells nothing of reads, index changes or other collections, which behave as the store’s own', async () => {
    const { store, told } = await observed();
    const watched = store.collection<{ _id: string; k: number }>('watched');
    const other = store.collection<{ _id: string }>('other');
    await other.insertOne({ _id: 'x' });
    await watched.createIndex({ k: 1 });
    await watched.find({});
    await watched.findOne({ _id: 'none' });
    await watched.countDocuments({});
    await watched.dropIndex({ k: 1 });
    expect(told).toEqual([]);
    expect(store.kind).toBe(inner?.kind);
    expect(store.database).toBe(inner?.database);
    expect(store.compoundIndexes).toBe(inner?.compoundIndexes);
    expect(await inner?.collection('other').countDocuments()).toBe(1);
  });
});
