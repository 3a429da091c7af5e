import { MongoNetworkError, MongoServerError } from 'mongodb';
import type { Collection as DriverCollection, Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { DuplicateKeyError, isDuplicateKeyError, isStoreError } from '../src/index.ts';
import { MongoCollection } from '../src/mongodb-collection.ts';

// The MongoDB adapter against a recording stand-in for the driver's
// collection: what it sends and how it maps errors, without a server (the
// contract suite covers behaviour wherever MONGO_URL is set).

interface Call {
  method: string;
  args: unknown[];
}

type Responder = (call: Call) => unknown;

function driver(respond: Responder = () => null): { collection: DriverCollection<Document>; calls: Call[] } {
  const calls: Call[] = [];
  const record =
    (method: string) =>
    async (...args: unknown[]) => {
      const call = { method, args };
      calls.push(call);
      return respond(call);
    };
  const collection = {
    collectionName: 'things',
    insertOne: record('insertOne'),
    updateOne: record('updateOne'),
    findOneAndUpdate: record('findOneAndUpdate'),
    createIndex: record('createIndex'),
    find: (...args: unknown[]) => ({ toArray: () => record('find')(...args) }),
  };
  return { collection: collection as unknown as DriverCollection<Document>, calls };
}

const open = () => undefined;
const UUID = /^[0-9a-f-]{36}$/;
const duplicate = () => new MongoServerError({ message: 'E11000 duplicate key', code: 11000, keyValue: { key: 'k' } });

describe('MongoCollection', () => {
  it('inserts a copy with a generated string _id and without undefined members', async () => {
    const { collection, calls } = driver();
    const input = { name: 'n', skip: undefined };
    const { insertedId } = await new MongoCollection(collection, open).insertOne(input);
    expect(insertedId).toMatch(UUID);
    expect(calls[0]?.args[0]).toEqual({ _id: insertedId, name: 'n' });
    expect(input).toEqual({ name: 'n', skip: undefined });
  });

  it('gives an upsert a string _id through $setOnInsert unless the filter or $setOnInsert sets one', async () => {
    const { collection, calls } = driver(() => ({
      matchedCount: 0,
      modifiedCount: 0,
      upsertedCount: 1,
      upsertedId: 'x',
    }));
    const things = new MongoCollection<{ _id: string; key: string; n?: number }>(collection, open);
    await things.updateOne({ key: 'k' }, { $inc: { n: 1 } }, { upsert: true });
    await things.updateOne({ _id: 'pinned' }, { $inc: { n: 1 } }, { upsert: true });
    await things.updateOne({ key: 'k' }, { $setOnInsert: { _id: 'mine' } }, { upsert: true });
    await things.updateOne({ key: 'k' }, { $inc: { n: 1 } });
    const updates = calls.map((call) => call.args[1] as Record<string, Record<string, unknown>>);
    expect(updates[0]?.$setOnInsert?._id).toMatch(UUID);
    expect(updates[1]).toEqual({ $inc: { n: 1 } });
    expect(updates[2]).toEqual({ $setOnInsert: { _id: 'mine' } });
    expect(updates[3]).toEqual({ $inc: { n: 1 } });
  });

  it('asks findOneAndUpdate for the bare document, before by default, with the sort', async () => {
    const { collection, calls } = driver(() => ({ _id: 'a' }));
    const things = new MongoCollection<{ _id: string; n: number }>(collection, open);
    expect(await things.findOneAndUpdate({ _id: 'a' }, { $inc: { n: 1 } }, { sort: { n: -1 } })).toEqual({ _id: 'a' });
    expect(calls[0]?.args[2]).toEqual({
      upsert: false,
      returnDocument: 'before',
      includeResultMetadata: false,
      sort: { n: -1 },
    });
  });

  it('sends RegExp conditions as $regex strings with only the i, m and s flags', async () => {
    const { collection, calls } = driver(() => []);
    const things = new MongoCollection<{ _id: string; name: string }>(collection, open);
    await things.find({ $or: [{ name: /^a/gi }, { name: { $regex: /b$/s } }] });
    expect(calls[0]?.args[0]).toEqual({
      $or: [{ name: { $regex: '^a', $options: 'i' } }, { name: { $regex: 'b$', $options: 's' } }],
    });
  });

  it('maps E11000 to a DuplicateKeyError carrying the key', async () => {
    const { collection } = driver(() => {
      throw duplicate();
    });
    const error = await new MongoCollection<{ _id: string; key: string }>(collection, open)
      .insertOne({ key: 'k' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateKeyError);
    expect((error as DuplicateKeyError).key).toEqual({ key: 'k' });
  });

  it('retries an upsert that lost a race on a unique key, and only an upsert', async () => {
    let failures = 1;
    const { collection, calls } = driver(() => {
      if (failures-- > 0) throw duplicate();
      return { _id: 'won', n: 2 };
    });
    const things = new MongoCollection<{ _id: string; key: string; n: number }>(collection, open);
    expect(await things.findOneAndUpdate({ key: 'k' }, { $inc: { n: 1 } }, { upsert: true })).toEqual({
      _id: 'won',
      n: 2,
    });
    expect(calls).toHaveLength(2);
    failures = 5;
    expect(isDuplicateKeyError(await things.findOneAndUpdate({ key: 'k' }, { $inc: { n: 1 } }).catch((e) => e))).toBe(
      true,
    );
    expect(calls).toHaveLength(3);
    expect(
      isDuplicateKeyError(await things.updateOne({ key: 'k' }, { $inc: { n: 1 } }, { upsert: true }).catch((e) => e)),
    ).toBe(true);
    expect(calls).toHaveLength(6);
  });

  it('maps a network failure to a retryable StoreError', async () => {
    const { collection } = driver(() => {
      throw new MongoNetworkError('connection reset');
    });
    const error = await new MongoCollection(collection, open).find({}).catch((e: unknown) => e);
    expect(isStoreError(error)).toBe(true);
    expect(isDuplicateKeyError(error)).toBe(false);
    expect((error as { retryable: boolean }).retryable).toBe(true);
  });

  it('creates an index under the MongoDB default name, sending only true options', async () => {
    const { collection, calls } = driver((call) => (call.args[1] as { name: string }).name);
    const things = new MongoCollection(collection, open);
    expect(await things.createIndex({ tenant: 1, key: -1 }, { unique: true })).toBe('tenant_1_key_-1');
    await things.createIndex({ at: 1 });
    expect(calls.map((call) => call.args)).toEqual([
      [
        { tenant: 1, key: -1 },
        { name: 'tenant_1_key_-1', unique: true },
      ],
      [{ at: 1 }, { name: 'at_1' }],
    ]);
  });
});
