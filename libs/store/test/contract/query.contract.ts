import { beforeEach, expect, it } from 'vitest';
import { StoreError } from '../../src/index.ts';
import type { Filter } from '../../src/index.ts';
import { idsOf, items } from './context.ts';
import type { ContractContext, Item } from './context.ts';

/** Five documents covering missing, null, empty-array and nested values. */
const FIXTURE: Item[] = [
  {
    _id: 'a',
    name: 'Alpha',
    n: 1,
    tags: ['red', 'blue'],
    meta: { owner: 'ann', level: 1 },
    at: '2024-01-01T00:00:00.000Z',
    note: 'x',
  },
  {
    _id: 'b',
    name: 'beta',
    n: 2,
    tags: ['blue'],
    meta: { owner: 'bob', level: 2 },
    at: '2024-02-01T00:00:00.000Z',
    note: null,
  },
  { _id: 'c', name: 'gamma', n: 3, tags: [], meta: { owner: 'ann' }, at: '2024-03-01T00:00:00.000Z' },
  { _id: 'd', name: 'delta', n: 4, at: '2024-04-01T00:00:00.000Z', note: 'y' },
  { _id: 'e', name: 'epsilon' },
];

export function queryContract(context: ContractContext): void {
  const ids = async (filter: Filter<Item>) => idsOf(await items(context).find(filter));

  beforeEach(async () => {
    await items(context).insertMany(FIXTURE);
  });

  it('matches equality on top-level and dotted nested fields', async () => {
    expect(await ids({ name: 'beta' })).toEqual(['b']);
    expect(await ids({ 'meta.owner': 'ann' })).toEqual(['a', 'c']);
    expect(await ids({ 'meta.owner': 'ann', n: 3 })).toEqual(['c']);
    expect(await ids({ meta: { owner: 'bob', level: 2 } })).toEqual(['b']);
  });

  it('matches an array field by one element, by position, or as a whole', async () => {
    expect(await ids({ tags: 'blue' })).toEqual(['a', 'b']);
    expect(await ids({ 'tags.0': 'red' })).toEqual(['a']);
    expect(await ids({ tags: ['blue'] })).toEqual(['b']);
  });

  it('matches $eq like plain equality', async () => {
    expect(await ids({ n: { $eq: 2 } })).toEqual(['b']);
  });

  it('matches $in and $nin', async () => {
    expect(await ids({ name: { $in: ['beta', 'delta', 'nope'] } })).toEqual(['b', 'd']);
    expect(await ids({ tags: { $in: ['red'] } })).toEqual(['a']);
    expect(await ids({ n: { $nin: [1, 2] } })).toEqual(['c', 'd', 'e']);
    expect(await ids({ tags: { $nin: ['blue'] } })).toEqual(['c', 'd', 'e']);
    expect(await ids({ name: { $in: [] } })).toEqual([]);
  });

  it('matches $gt $gte $lt $lte on numbers and on ISO instants', async () => {
    expect(await ids({ n: { $gt: 2 } })).toEqual(['c', 'd']);
    expect(await ids({ n: { $gte: 2, $lt: 4 } })).toEqual(['b', 'c']);
    expect(await ids({ n: { $lte: 1 } })).toEqual(['a']);
    expect(await ids({ at: { $gte: '2024-02-01T00:00:00.000Z', $lt: '2024-04-01T00:00:00.000Z' } })).toEqual([
      'b',
      'c',
    ]);
  });

  it('compares only values of the same type', async () => {
    expect(await ids({ n: { $gt: '0' as unknown as number } })).toEqual([]);
  });

  it('matches $ne, including documents without the field and arrays without the value', async () => {
    expect(await ids({ n: { $ne: 2 } })).toEqual(['a', 'c', 'd', 'e']);
    expect(await ids({ tags: { $ne: 'blue' } })).toEqual(['c', 'd', 'e']);
  });

  it('matches null against null and missing fields, and $ne null against the rest', async () => {
    expect(await ids({ note: null })).toEqual(['b', 'c', 'e']);
    expect(await ids({ note: { $eq: null } })).toEqual(['b', 'c', 'e']);
    expect(await ids({ note: { $ne: null } })).toEqual(['a', 'd']);
    expect(await ids({ note: { $in: [null, 'y'] } })).toEqual(['b', 'c', 'd', 'e']);
    expect(await ids({ note: { $nin: [null] } })).toEqual(['a', 'd']);
  });

  it('matches $exists, counting null and empty arrays as present', async () => {
    expect(await ids({ note: { $exists: true } })).toEqual(['a', 'b', 'd']);
    expect(await ids({ note: { $exists: false } })).toEqual(['c', 'e']);
    expect(await ids({ tags: { $exists: true } })).toEqual(['a', 'b', 'c']);
    expect(await ids({ 'meta.level': { $exists: false } })).toEqual(['c', 'd', 'e']);
  });

  it('matches $regex given as a string with $options or as a RegExp', async () => {
    expect(await ids({ name: { $regex: '^a' } })).toEqual([]);
    expect(await ids({ name: { $regex: '^a', $options: 'i' } })).toEqual(['a']);
    expect(await ids({ name: { $regex: /ta$/ } })).toEqual(['b', 'd']);
    expect(await ids({ name: /^(g|e)/ })).toEqual(['c', 'e']);
    // A global flag must not make matching depend on the previous match.
    expect(await ids({ name: /a/g })).toEqual(['a', 'b', 'c', 'd']);
  });

  it('combines $or and $and', async () => {
    expect(await ids({ $or: [{ n: 1 }, { name: 'delta' }] })).toEqual(['a', 'd']);
    expect(await ids({ $and: [{ 'meta.owner': 'ann' }, { $or: [{ n: { $gt: 2 } }, { note: 'x' }] }] })).toEqual([
      'a',
      'c',
    ]);
    expect(await ids({ $and: [{ n: { $gt: 1 } }, { n: { $lt: 4 } }], name: { $ne: 'beta' } })).toEqual(['c']);
  });

  it('refuses unsupported operators, empty $or and undefined values', async () => {
    const refused: unknown[] = [
      { $where: 'true' },
      { n: { $mod: [2, 0] } },
      { $or: [] },
      { name: undefined },
      { n: { $in: [1, undefined] } },
      { n: { $gt: 1, plain: 2 } },
      { name: { $regex: 'a', $options: 'x' } },
    ];
    for (const filter of refused) {
      await expect(items(context).find(filter as Filter<Item>)).rejects.toThrow(StoreError);
    }
  });
}
