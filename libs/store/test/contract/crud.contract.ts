import { expect, it } from 'vitest';
import { STORE_ERROR_KINDS, StoreError, isStoreError } from '../../src/index.ts';
import { idsOf, items, namesOf } from './context.ts';
import type { ContractContext, Item } from './context.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function crudContract(context: ContractContext): void {
  it('reports its kind and database', () => {
    const store = context.store();
    expect(['embedded', 'mongodb']).toContain(store.kind);
    expect(store.database).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('inserts a document with its own _id and finds it by _id', async () => {
    const result = await items(context).insertOne({ _id: 'a', name: 'alpha', n: 1 });
    expect(result).toEqual({ insertedId: 'a' });
    expect(await items(context).findOne({ _id: 'a' })).toEqual({ _id: 'a', name: 'alpha', n: 1 });
  });

  it('generates a string UUID _id when the document has none, without touching the input', async () => {
    const input = { name: 'beta' };
    const { insertedId } = await items(context).insertOne(input);
    expect(insertedId).toMatch(UUID);
    expect(input).toEqual({ name: 'beta' });
    expect(await items(context).findOne({ name: 'beta' })).toEqual({ _id: insertedId, name: 'beta' });
  });

  it('drops undefined members of an inserted document', async () => {
    await items(context).insertOne({ _id: 'u', name: 'u', note: undefined });
    expect(await items(context).findOne({ _id: 'u' })).toEqual({ _id: 'u', name: 'u' });
  });

  it('insertMany inserts every document and returns their ids in order', async () => {
    const result = await items(context).insertMany([{ _id: 'x', name: 'x' }, { name: 'y' }, { name: 'z' }]);
    expect(result.insertedCount).toBe(3);
    expect(result.insertedIds[0]).toBe('x');
    expect(result.insertedIds[1]).toMatch(UUID);
    expect(idsOf(await items(context).find({}))).toEqual([...result.insertedIds].sort());
  });

  it('insertMany of nothing inserts nothing', async () => {
    expect(await items(context).insertMany([])).toEqual({ insertedCount: 0, insertedIds: [] });
  });

  it('findOne returns null when nothing matches', async () => {
    expect(await items(context).findOne({ name: 'nobody' })).toBeNull();
  });

  it('returns copies: changing a result does not change the stored document', async () => {
    await items(context).insertOne({ _id: 'c', name: 'copy', tags: ['t'] });
    const found = (await items(context).findOne({ _id: 'c' })) as Item;
    found.name = 'changed';
    found.tags?.push('u');
    expect(await items(context).findOne({ _id: 'c' })).toEqual({ _id: 'c', name: 'copy', tags: ['t'] });
  });

  it('sorts by several fields with mixed directions', async () => {
    await items(context).insertMany([
      { _id: '1', name: 'b', n: 1 },
      { _id: '2', name: 'a', n: 2 },
      { _id: '3', name: 'a', n: 1 },
      { _id: '4', name: 'b', n: 3 },
    ]);
    const found = await items(context).find({}, { sort: { name: 1, n: -1 } });
    expect(found.map((item) => item._id)).toEqual(['2', '3', '4', '1']);
  });

  it('applies skip and limit after the sort', async () => {
    await items(context).insertMany([5, 3, 9, 1, 7].map((n) => ({ _id: `n${n}`, name: 'n', n })));
    const found = await items(context).find({}, { sort: { n: 1 }, skip: 1, limit: 3 });
    expect(found.map((item) => item.n)).toEqual([3, 5, 7]);
  });

  it('findOne picks the first document of the sort', async () => {
    await items(context).insertMany([3, 1, 2].map((n) => ({ _id: `n${n}`, name: 'n', n })));
    expect((await items(context).findOne({ name: 'n' }, { sort: { n: -1 } }))?._id).toBe('n3');
  });

  it('projects the chosen fields plus _id', async () => {
    await items(context).insertOne({ _id: 'p', name: 'p', n: 1, meta: { owner: 'o', level: 2 } });
    expect(await items(context).findOne({ _id: 'p' }, { projection: { name: 1, 'meta.owner': 1 } })).toEqual({
      _id: 'p',
      name: 'p',
      meta: { owner: 'o' },
    });
    expect(await items(context).find({ _id: 'p' }, { projection: { _id: 0, n: 1 } })).toEqual([{ n: 1 }]);
  });

  it('projects everything but the excluded fields', async () => {
    await items(context).insertOne({ _id: 'p', name: 'p', n: 1, tags: ['t'] });
    expect(await items(context).findOne({ _id: 'p' }, { projection: { tags: 0, n: 0 } })).toEqual({
      _id: 'p',
      name: 'p',
    });
  });

  it('counts matching documents', async () => {
    await items(context).insertMany([1, 2, 3, 4].map((n) => ({ name: n % 2 === 0 ? 'even' : 'odd', n })));
    expect(await items(context).countDocuments({ name: 'even' })).toBe(2);
    expect(await items(context).countDocuments()).toBe(4);
  });

  it('deleteOne removes one matching document', async () => {
    await items(context).insertMany([{ name: 'd' }, { name: 'd' }, { name: 'keep' }]);
    expect(await items(context).deleteOne({ name: 'd' })).toEqual({ deletedCount: 1 });
    expect(namesOf(await items(context).find({}))).toEqual(['d', 'keep']);
  });

  it('deleteMany removes every matching document and counts them', async () => {
    await items(context).insertMany([{ name: 'd' }, { name: 'd' }, { name: 'keep' }]);
    expect(await items(context).deleteMany({ name: 'd' })).toEqual({ deletedCount: 2 });
    expect(await items(context).deleteMany({ name: 'd' })).toEqual({ deletedCount: 0 });
    expect(namesOf(await items(context).find({}))).toEqual(['keep']);
  });

  it('refuses a collection name that could escape the database', () => {
    for (const name of ['', '../x', 'a/b', 'a\\b', '.hidden', 'system.users', 'x'.repeat(101)]) {
      expect(() => context.store().collection(name)).toThrow(StoreError);
    }
  });

  it('refuses a document that is not a plain object or has a $ or dotted field name', async () => {
    await expect(items(context).insertOne([] as unknown as Item)).rejects.toThrow(StoreError);
    await expect(items(context).insertOne({ name: 'x', meta: { ['$bad' as 'owner']: 'v' } })).rejects.toThrow(
      StoreError,
    );
    await expect(items(context).insertOne({ name: 'x', ['a.b' as 'n']: 1 })).rejects.toThrow(StoreError);
    await expect(items(context).insertOne({ _id: 7 as unknown as string, name: 'x' })).rejects.toThrow(StoreError);
  });

  it('marks a malformed call as kind invalid, not retryable: the same call fails again', async () => {
    const refused = await items(context)
      .insertOne({ name: 'x', ['a.b' as 'n']: 1 })
      .catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ kind: STORE_ERROR_KINDS.invalid, retryable: false });
    const badFilter = await items(context)
      .find({ name: { $nope: 1 } } as never)
      .catch((caught: unknown) => caught);
    expect(badFilter).toMatchObject({ kind: STORE_ERROR_KINDS.invalid });
  });

  it('refuses every call once the store is closed', async () => {
    const collection = items(context);
    await context.store().close();
    await context.store().close();
    const error = await collection.find({}).catch((caught: unknown) => caught);
    expect(isStoreError(error)).toBe(true);
    expect(() => context.store().collection('items')).toThrow(StoreError);
  });
}
