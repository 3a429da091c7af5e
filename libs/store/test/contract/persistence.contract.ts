import { expect, it } from 'vitest';
import { isDuplicateKeyError } from '../../src/index.ts';
import { items } from './context.ts';
import type { ContractContext } from './context.ts';

export function persistenceContract(context: ContractContext): void {
  it.runIf(context.durable)(
    'keeps inserts, updates, deletions and unique indexes across close and reopen',
    async () => {
      await items(context).createIndex({ name: 1 }, { unique: true });
      await items(context).insertMany([
        { _id: 'a', name: 'kept', n: 1 },
        { _id: 'b', name: 'changed', n: 1 },
        { _id: 'c', name: 'deleted' },
      ]);
      await items(context).updateOne({ _id: 'b' }, { $inc: { n: 1 }, $push: { tags: 't' } });
      await items(context).deleteOne({ _id: 'c' });
      await items(context).updateOne({ name: 'upserted' }, { $set: { n: 3 } }, { upsert: true });

      await context.reopen();

      const found = await items(context).find({}, { sort: { name: 1 }, projection: { _id: 0 } });
      expect(found).toEqual([
        { name: 'changed', n: 2, tags: ['t'] },
        { name: 'kept', n: 1 },
        { name: 'upserted', n: 3 },
      ]);
      const duplicate = await items(context)
        .insertOne({ name: 'kept' })
        .catch((error: unknown) => error);
      expect(isDuplicateKeyError(duplicate)).toBe(true);
    },
  );

  it('keeps the writes made before and after commitSoon, a failed one apart, and ignores it with none under way', async () => {
    context.store().commitSoon();
    const first = items(context).insertOne({ _id: 'a', name: 'before' });
    const duplicate = items(context)
      .insertOne({ _id: 'a', name: 'duplicate' })
      .catch((error: unknown) => error);
    context.store().commitSoon();
    const second = items(context).insertOne({ _id: 'b', name: 'after' });
    await first;
    expect(isDuplicateKeyError(await duplicate)).toBe(true);
    await second;
    context.store().commitSoon();
    const found = await items(context).find({}, { sort: { _id: 1 } });
    expect(found).toEqual([
      { _id: 'a', name: 'before' },
      { _id: 'b', name: 'after' },
    ]);
    if (!context.durable) return;
    await context.reopen();
    expect(await items(context).countDocuments()).toBe(2);
  });

  it.runIf(!context.durable)('starts empty when the target is not durable', async () => {
    await items(context).insertOne({ _id: 'a', name: 'gone' });
    await context.reopen();
    expect(await items(context).countDocuments()).toBe(0);
  });
}
