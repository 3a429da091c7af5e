import { expect, it } from 'vitest';
import { items } from './context.ts';
import type { ContractContext } from './context.ts';

interface Counter {
  _id: string;
  key: string;
  count: number;
  first?: number;
}

export function findAndUpdateContract(context: ContractContext): void {
  it('returns the document as it was before the update by default', async () => {
    await items(context).insertOne({ _id: 'a', name: 's', n: 1 });
    const before = await items(context).findOneAndUpdate({ _id: 'a' }, { $inc: { n: 1 } });
    expect(before).toEqual({ _id: 'a', name: 's', n: 1 });
    expect(await items(context).findOne({ _id: 'a' })).toEqual({ _id: 'a', name: 's', n: 2 });
  });

  it('returns the updated document when returnDocument is after', async () => {
    await items(context).insertOne({ _id: 'a', name: 's', n: 1 });
    const after = await items(context).findOneAndUpdate({ _id: 'a' }, { $inc: { n: 1 } }, { returnDocument: 'after' });
    expect(after).toEqual({ _id: 'a', name: 's', n: 2 });
  });

  it('returns null and changes nothing when nothing matches without upsert', async () => {
    expect(
      await items(context).findOneAndUpdate({ name: 'none' }, { $set: { n: 1 } }, { returnDocument: 'after' }),
    ).toBeNull();
    expect(await items(context).countDocuments()).toBe(0);
  });

  it('upserts and returns the new document after, or null before', async () => {
    const after = await items(context).findOneAndUpdate(
      { name: 'new' },
      { $set: { n: 1 }, $setOnInsert: { note: 'inserted' } },
      { upsert: true, returnDocument: 'after' },
    );
    expect(after).toMatchObject({ name: 'new', n: 1, note: 'inserted' });
    expect(typeof after?._id).toBe('string');
    const before = await items(context).findOneAndUpdate({ name: 'other' }, { $set: { n: 1 } }, { upsert: true });
    expect(before).toBeNull();
    expect(await items(context).countDocuments({ name: 'other' })).toBe(1);
  });

  it('updates the first document of the sort when several match', async () => {
    await items(context).insertMany([
      { _id: 'a', name: 'job', n: 2 },
      { _id: 'b', name: 'job', n: 1 },
      { _id: 'c', name: 'job', n: 3 },
    ]);
    const claimed = await items(context).findOneAndUpdate(
      { name: 'job', note: { $exists: false } },
      { $set: { note: 'claimed' } },
      { sort: { n: 1 }, returnDocument: 'after' },
    );
    expect(claimed?._id).toBe('b');
    const next = await items(context).findOneAndUpdate(
      { name: 'job', note: { $exists: false } },
      { $set: { note: 'claimed' } },
      { sort: { n: 1 } },
    );
    expect(next?._id).toBe('a');
  });

  it('gives each of many concurrent claims a different document', async () => {
    await items(context).insertMany(
      Array.from({ length: 20 }, (_, index) => ({ _id: `job${index}`, name: 'job', n: index })),
    );
    const claims = await Promise.all(
      Array.from({ length: 25 }, () =>
        items(context).findOneAndUpdate(
          { name: 'job', note: { $exists: false } },
          { $set: { note: 'claimed' } },
          { sort: { n: 1 } },
        ),
      ),
    );
    const claimed = claims.filter((claim) => claim !== null).map((claim) => claim._id);
    expect(new Set(claimed).size).toBe(20);
    expect(claims.filter((claim) => claim === null)).toHaveLength(5);
  });

  it('turns 50 concurrent upserts on one key into one document whose count adds up', async () => {
    const counters = context.store().collection<Counter>('counters');
    await counters.createIndex({ key: 1 }, { unique: true });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        counters.findOneAndUpdate(
          { key: 'hot' },
          { $inc: { count: 1 }, $setOnInsert: { first: index } },
          { upsert: true, returnDocument: 'after' },
        ),
      ),
    );
    const stored = await counters.find({ key: 'hot' });
    expect(stored).toHaveLength(1);
    expect(stored[0]?.count).toBe(50);
    expect(results.map((result) => result?.count ?? 0).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    expect(new Set(results.map((result) => result?._id))).toEqual(new Set([stored[0]?._id]));
    expect(new Set(results.map((result) => result?.first))).toEqual(new Set([stored[0]?.first]));
  });
}
