import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/index.ts';
import type { Collection, Filter, Sort, Store } from '../src/index.ts';

/**
 * The sqlite engine against the nedb engine on seeded random documents,
 * filters, sorts and updates: both must give the same answers. Documents
 * mix every type, missing and null, arrays (empty and nested) and nested
 * objects, on indexed fields (single, compound, multikey, dotted), so that
 * index narrowing, ordered walks and plain scans all meet the awkward cases.
 */

interface Doc {
  _id: string;
  [field: string]: unknown;
}

/** mulberry32: a small seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SCALARS: unknown[] = [null, -2, -1, 0, 0.5, 1, 2, 3, '', 'a', 'b', 'ab', 'B', 'é', '😀', '\uffff', true, false];
const FIELDS = ['a', 'b', 's', 'tags', 'c.d', 'rank'];

function pick<V>(next: () => number, values: readonly V[]): V {
  return values[Math.floor(next() * values.length)] as V;
}

/**
 * A scalar, an array or an object. No nested arrays: on those nedb's index
 * and nedb's matcher disagree (the index reaches one level, the matcher
 * every level), so the nedb engine's own answer depends on the plan; the
 * sqlite engine always gives the matcher's.
 */
function value(next: () => number, nested = false): unknown {
  const roll = next();
  if (roll < 0.6) return pick(next, SCALARS);
  if (roll < 0.8 && !nested) return Array.from({ length: Math.floor(next() * 3) }, () => value(next, true));
  return { d: pick(next, SCALARS) };
}

function document(next: () => number, i: number): Doc {
  const doc: Doc = { _id: `d${String(i).padStart(3, '0')}`, rank: Math.floor(next() * 10) };
  for (const field of ['a', 'b']) if (next() < 0.85) doc[field] = value(next);
  // Scalars only: its index stays ordered, so it can serve sorts.
  if (next() < 0.9) doc.s = pick(next, SCALARS);
  if (next() < 0.7) doc.tags = Array.from({ length: Math.floor(next() * 3) }, () => pick(next, ['x', 'y', 'z']));
  if (next() < 0.7) doc.c = next() < 0.2 ? [{ d: pick(next, SCALARS) }, { e: 1 }] : { d: value(next) };
  return doc;
}

function condition(next: () => number): unknown {
  const scalar = () => pick(next, SCALARS);
  const ordered = () => pick(next, [-1, 0, 1, 2.5, 'a', 'ab', 'b', '']);
  switch (Math.floor(next() * 9)) {
    case 0:
      return scalar();
    case 1:
      return { $in: [scalar(), scalar()] };
    case 2:
      return { [pick(next, ['$gt', '$gte'])]: ordered() };
    case 3:
      return { [pick(next, ['$lt', '$lte'])]: ordered() };
    case 4:
      return { $gte: ordered(), $lt: ordered() };
    case 5:
      return { $ne: scalar() };
    case 6:
      return { $nin: [scalar()] };
    case 7:
      return { $exists: next() < 0.5 };
    default:
      return { $eq: scalar() };
  }
}

function filter(next: () => number): Filter<Doc> {
  const clause = () => ({ [pick(next, FIELDS)]: condition(next) });
  const roll = next();
  if (roll < 0.5) return clause() as Filter<Doc>;
  if (roll < 0.75) return { ...clause(), ...clause() } as Filter<Doc>;
  if (roll < 0.9) return { $and: [clause(), clause()] } as Filter<Doc>;
  return { $or: [clause(), clause()] } as Filter<Doc>;
}

/** A total order (ties broken by `_id`), so both engines must give the same sequence. */
function sort(next: () => number): Sort {
  const direction = pick(next, [1, -1] as const);
  return { [pick(next, FIELDS)]: direction, _id: next() < 0.7 ? direction : (-direction as 1 | -1) };
}

const ids = (documents: readonly Doc[]) => documents.map((doc) => doc._id);

/**
 * A value as a datafile holds it. nedb's `$set` of `c.d` on an array `c`
 * gives the array a named member, which JSON (nedb's datafile, the sqlite
 * engine's rows) leaves out: nedb forgets it at its next load.
 */
const stored = <V>(value: V): V => JSON.parse(JSON.stringify(value)) as V;

describe('the sqlite engine answers as the nedb engine does', () => {
  const stores: Store[] = [];
  let nedb: Collection<Doc>;
  let sqlite: Collection<Doc>;

  beforeAll(async () => {
    const both = await Promise.all(
      (['nedb', 'sqlite'] as const).map((engine) =>
        openStore({ dataDir: '/nonexistent', database: 'diff', engine, inMemory: true }),
      ),
    );
    stores.push(...both);
    [nedb, sqlite] = both.map((store) => store.collection<Doc>('docs')) as [Collection<Doc>, Collection<Doc>];
    const next = random(7);
    const docs = Array.from({ length: 300 }, (_, i) => document(next, i));
    for (const collection of [nedb, sqlite]) {
      await collection.createIndex({ a: 1 });
      await collection.createIndex({ b: 1, rank: 1 });
      await collection.createIndex({ s: 1, rank: 1 });
      await collection.createIndex({ tags: 1 });
      await collection.createIndex({ 'c.d': 1 });
      await collection.createIndex({ rank: 1 });
      await collection.insertMany(docs);
    }
  });

  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
  });

  it('finds and counts the same documents for 400 random filters', async () => {
    const next = random(11);
    for (let round = 0; round < 400; round += 1) {
      const query = filter(next);
      const [expected, actual] = await Promise.all([nedb.find(query), sqlite.find(query)]);
      expect(ids(actual).sort(), JSON.stringify(query)).toEqual(ids(expected).sort());
      expect(await sqlite.countDocuments(query), JSON.stringify(query)).toBe(expected.length);
    }
  });

  it('sorts, skips and limits the same way for 400 random reads', async () => {
    const next = random(13);
    for (let round = 0; round < 400; round += 1) {
      const roll = next();
      // A third fix `s` and sort on `rank`: a compound index's ordered walk.
      const query = roll < 0.2 ? {} : roll < 0.5 ? ({ s: pick(next, SCALARS) } as Filter<Doc>) : filter(next);
      const direction = pick(next, [1, -1] as const);
      const order = roll >= 0.2 && roll < 0.5 ? { rank: direction, _id: direction } : sort(next);
      const options = { sort: order, limit: pick(next, [0, 1, 3, 10]), skip: pick(next, [0, 0, 2]) };
      const [expected, actual] = await Promise.all([nedb.find(query, options), sqlite.find(query, options)]);
      expect(ids(actual), JSON.stringify({ query, options })).toEqual(ids(expected));
    }
  });

  it('updates, claims and deletes the same documents for 200 random writes', async () => {
    const next = random(17);
    for (let round = 0; round < 200; round += 1) {
      const query = filter(next);
      const change = { $set: { [pick(next, ['a', 'b', 'c.d', 'rank'])]: value(next) }, $inc: { n: 1 } };
      const roll = next();
      if (roll < 0.4) {
        const options = { sort: sort(next) };
        const [expected, actual] = await Promise.all([
          nedb.findOneAndUpdate(query, change, options),
          sqlite.findOneAndUpdate(query, change, options),
        ]);
        expect(actual, JSON.stringify({ query, change, options })).toEqual(stored(expected));
      } else if (roll < 0.8) {
        const [expected, actual] = await Promise.all([
          nedb.updateMany(query, change),
          sqlite.updateMany(query, change),
        ]);
        expect({ ...actual }, JSON.stringify({ query, change })).toEqual({ ...expected });
      } else {
        await Promise.all([nedb.deleteOne(query), sqlite.deleteOne(query)]);
      }
      expect(await sqlite.find({}, { sort: { _id: 1 } })).toEqual(stored(await nedb.find({}, { sort: { _id: 1 } })));
    }
  });
});
