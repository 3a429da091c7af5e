import { expect, it } from 'vitest';
import { StoreError } from '../../src/index.ts';
import type { Update } from '../../src/index.ts';
import { items } from './context.ts';
import type { ContractContext, Item } from './context.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function updateContract(context: ContractContext): void {
  const seed = (document: Item) => items(context).insertOne(document);
  const get = (id: string) => items(context).findOne({ _id: id });

  it('$set changes one matching document and reports the counts', async () => {
    await items(context).insertMany([
      { _id: 'a', name: 's' },
      { _id: 'b', name: 's' },
    ]);
    const result = await items(context).updateOne({ _id: 'a' }, { $set: { n: 5, name: 't' } });
    expect(result).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedCount: 0, upsertedId: null });
    expect(await get('a')).toEqual({ _id: 'a', name: 't', n: 5 });
    expect(await get('b')).toEqual({ _id: 'b', name: 's' });
  });

  it('reports a match without modification when the update changes nothing', async () => {
    await seed({ _id: 'a', name: 's', n: 1 });
    const result = await items(context).updateOne({ _id: 'a' }, { $set: { n: 1 } });
    expect(result).toEqual({ matchedCount: 1, modifiedCount: 0, upsertedCount: 0, upsertedId: null });
  });

  it('changes nothing when no document matches and upsert is off', async () => {
    const result = await items(context).updateOne({ name: 'none' }, { $set: { n: 1 } });
    expect(result).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null });
    expect(await items(context).countDocuments()).toBe(0);
  });

  it('$set on a dotted path creates the nested fields', async () => {
    await seed({ _id: 'a', name: 's' });
    await items(context).updateOne({ _id: 'a' }, { $set: { 'meta.owner': 'ann' } });
    expect(await get('a')).toEqual({ _id: 'a', name: 's', meta: { owner: 'ann' } });
  });

  it('$unset removes top-level and nested fields', async () => {
    await seed({ _id: 'a', name: 's', n: 1, meta: { owner: 'o', level: 1 } });
    await items(context).updateOne({ _id: 'a' }, { $unset: { n: '', 'meta.level': 1 } });
    expect(await get('a')).toEqual({ _id: 'a', name: 's', meta: { owner: 'o' } });
  });

  it('$inc increments a number and starts a missing one from zero', async () => {
    await seed({ _id: 'a', name: 's', n: 2 });
    await items(context).updateOne({ _id: 'a' }, { $inc: { n: -3, 'meta.level': 2 } });
    expect(await get('a')).toEqual({ _id: 'a', name: 's', n: -1, meta: { level: 2 } });
  });

  it('$push appends one value or several with $each, creating the array', async () => {
    await seed({ _id: 'a', name: 's' });
    await items(context).updateOne({ _id: 'a' }, { $push: { tags: 'x' } });
    await items(context).updateOne({ _id: 'a' }, { $push: { tags: { $each: ['y', 'z'] } } });
    expect((await get('a'))?.tags).toEqual(['x', 'y', 'z']);
  });

  it('updateMany updates every match and counts the ones that changed', async () => {
    await items(context).insertMany([
      { _id: 'a', name: 'm', n: 1 },
      { _id: 'b', name: 'm', n: 2 },
      { _id: 'c', name: 'other', n: 1 },
    ]);
    const result = await items(context).updateMany({ name: 'm' }, { $set: { n: 2 } });
    expect(result).toEqual({ matchedCount: 2, modifiedCount: 1, upsertedCount: 0, upsertedId: null });
    expect((await items(context).find({ n: 2 }, { sort: { _id: 1 } })).map((item) => item._id)).toEqual(['a', 'b']);
  });

  it('upsert inserts a document built from the filter equalities, $setOnInsert and the other operators', async () => {
    const result = await items(context).updateOne(
      { name: 'u', 'meta.owner': 'ann', n: { $gt: 10 } },
      { $set: { note: 'set' }, $inc: { 'meta.level': 1 }, $setOnInsert: { at: '2024-01-01T00:00:00.000Z' } },
      { upsert: true },
    );
    expect(result.upsertedCount).toBe(1);
    expect(result.matchedCount).toBe(0);
    expect(result.upsertedId).toMatch(UUID);
    expect(await get(result.upsertedId as string)).toEqual({
      _id: result.upsertedId,
      name: 'u',
      meta: { owner: 'ann', level: 1 },
      note: 'set',
      at: '2024-01-01T00:00:00.000Z',
    });
  });

  it('upsert keeps the _id pinned by the filter', async () => {
    const result = await items(context).updateOne({ _id: 'fixed' }, { $set: { name: 'f' } }, { upsert: true });
    expect(result.upsertedId).toBe('fixed');
    expect(await get('fixed')).toEqual({ _id: 'fixed', name: 'f' });
  });

  it('upsert takes the _id from $setOnInsert when the filter does not pin it', async () => {
    const result = await items(context).updateOne(
      { name: 'g' },
      { $setOnInsert: { _id: 'chosen', n: 1 } },
      { upsert: true },
    );
    expect(result.upsertedId).toBe('chosen');
    expect(await get('chosen')).toEqual({ _id: 'chosen', name: 'g', n: 1 });
  });

  it('ignores $setOnInsert when the upsert finds a document', async () => {
    await seed({ _id: 'a', name: 's', n: 1 });
    const result = await items(context).updateOne(
      { name: 's' },
      { $inc: { n: 1 }, $setOnInsert: { note: 'new' } },
      { upsert: true },
    );
    expect(result).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedCount: 0, upsertedId: null });
    expect(await get('a')).toEqual({ _id: 'a', name: 's', n: 2 });
  });

  it('an update with only $setOnInsert leaves a found document as it is', async () => {
    await seed({ _id: 'a', name: 's', n: 1 });
    const result = await items(context).updateOne({ _id: 'a' }, { $setOnInsert: { note: 'new' } }, { upsert: true });
    expect(result).toEqual({ matchedCount: 1, modifiedCount: 0, upsertedCount: 0, upsertedId: null });
    expect(await get('a')).toEqual({ _id: 'a', name: 's', n: 1 });
  });

  it('updateMany with upsert inserts one document when nothing matches', async () => {
    const result = await items(context).updateMany({ name: 'many' }, { $set: { n: 1 } }, { upsert: true });
    expect(result.upsertedCount).toBe(1);
    expect(await items(context).find({ name: 'many' }, { projection: { _id: 0 } })).toEqual([{ name: 'many', n: 1 }]);
  });

  it('drops undefined members of an update instead of storing them', async () => {
    await seed({ _id: 'a', name: 's', n: 1 });
    await items(context).updateOne({ _id: 'a' }, { $set: { name: 't', n: undefined } });
    expect(await get('a')).toEqual({ _id: 'a', name: 't', n: 1 });
  });

  it('fails with a StoreError and changes nothing when an operator meets the wrong type', async () => {
    await seed({ _id: 'a', name: 's', n: 1 });
    const wrongInc = { $inc: { name: 1 } } as unknown as Update<Item>;
    await expect(items(context).updateOne({ _id: 'a' }, wrongInc)).rejects.toThrow(StoreError);
    await expect(items(context).updateOne({ _id: 'a' }, { $push: { name: 'x' } as never })).rejects.toThrow(StoreError);
    expect(await get('a')).toEqual({ _id: 'a', name: 's', n: 1 });
  });

  it('refuses replacement documents, unknown operators, _id changes and conflicting paths', async () => {
    await seed({ _id: 'a', name: 's', n: 1 });
    const refused: unknown[] = [
      { name: 'replacement' },
      {},
      { $rename: { name: 'title' } },
      { $set: { _id: 'b' } },
      { $set: { n: 1 }, $inc: { n: 1 } },
      { $set: { meta: {} }, $unset: { 'meta.owner': 1 } },
      { $inc: { n: '1' } },
      { $set: { 'bad..path': 1 } },
    ];
    for (const update of refused) {
      await expect(items(context).updateOne({ _id: 'a' }, update as Update<Item>)).rejects.toThrow(StoreError);
    }
    expect(await get('a')).toEqual({ _id: 'a', name: 's', n: 1 });
  });
}
