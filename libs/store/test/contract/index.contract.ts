import { expect, it } from 'vitest';
import { DuplicateKeyError, StoreError, isDuplicateKeyError } from '../../src/index.ts';
import { idsOf, items } from './context.ts';
import type { ContractContext } from './context.ts';

interface Keyed {
  _id: string;
  tenant?: string;
  key?: string;
  email?: string;
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

export function indexContract(context: ContractContext): void {
  const keyed = () => context.store().collection<Keyed>('keyed');

  it('refuses a second document with an existing _id with a DuplicateKeyError', async () => {
    await items(context).insertOne({ _id: 'a', name: 'first' });
    const error = await caught(items(context).insertOne({ _id: 'a', name: 'second' }));
    expect(isDuplicateKeyError(error)).toBe(true);
    expect(error).toBeInstanceOf(DuplicateKeyError);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as DuplicateKeyError).collection).toBe('items');
    expect((error as DuplicateKeyError).retryable).toBe(false);
    expect(await items(context).findOne({ _id: 'a' })).toEqual({ _id: 'a', name: 'first' });
  });

  it('names the index and creates it only once', async () => {
    expect(await keyed().createIndex({ tenant: 1, key: -1 }, { unique: true })).toBe('tenant_1_key_-1');
    expect(await keyed().createIndex({ tenant: 1, key: -1 }, { unique: true })).toBe('tenant_1_key_-1');
  });

  it('a unique index refuses a duplicate insert', async () => {
    await keyed().createIndex({ email: 1 }, { unique: true });
    await keyed().insertOne({ email: 'a@x' });
    expect(isDuplicateKeyError(await caught(keyed().insertOne({ email: 'a@x' })))).toBe(true);
    expect(await keyed().countDocuments({ email: 'a@x' })).toBe(1);
  });

  it('a unique index refuses an update that would duplicate a key', async () => {
    await keyed().createIndex({ email: 1 }, { unique: true });
    await keyed().insertMany([
      { _id: '1', email: 'a@x' },
      { _id: '2', email: 'b@x' },
    ]);
    expect(isDuplicateKeyError(await caught(keyed().updateOne({ _id: '2' }, { $set: { email: 'a@x' } })))).toBe(true);
    expect(await keyed().findOne({ _id: '2' })).toEqual({ _id: '2', email: 'b@x' });
  });

  it('a unique index refuses an upsert that would insert a duplicate key', async () => {
    await keyed().createIndex({ email: 1 }, { unique: true });
    await keyed().insertOne({ _id: '1', tenant: 't1', email: 'a@x' });
    const upsert = keyed().updateOne({ tenant: 't2' }, { $set: { email: 'a@x' } }, { upsert: true });
    expect(isDuplicateKeyError(await caught(upsert))).toBe(true);
    expect(await keyed().countDocuments()).toBe(1);
  });

  it('an upsert whose filter pins an existing _id it does not match throws a DuplicateKeyError', async () => {
    await keyed().insertOne({ _id: '1', tenant: 't1' });
    const upsert = keyed().updateOne({ _id: '1', tenant: 't2' }, { $set: { key: 'k' } }, { upsert: true });
    expect(isDuplicateKeyError(await caught(upsert))).toBe(true);
    expect(await keyed().findOne({ _id: '1' })).toEqual({ _id: '1', tenant: 't1' });
  });

  it('a compound unique index allows a repeated value in one of its fields', async () => {
    await keyed().createIndex({ tenant: 1, key: 1 }, { unique: true });
    await keyed().insertMany([
      { tenant: 't1', key: 'k1' },
      { tenant: 't1', key: 'k2' },
      { tenant: 't2', key: 'k1' },
    ]);
    expect(isDuplicateKeyError(await caught(keyed().insertOne({ tenant: 't1', key: 'k1' })))).toBe(true);
  });

  it('a unique index counts a missing field as a value, unless it is sparse', async () => {
    await keyed().createIndex({ email: 1 }, { unique: true });
    await keyed().insertOne({ tenant: 't' });
    expect(isDuplicateKeyError(await caught(keyed().insertOne({ tenant: 't' })))).toBe(true);
    const sparse = context.store().collection<Keyed>('sparse');
    await sparse.createIndex({ email: 1 }, { unique: true, sparse: true });
    await sparse.insertMany([{ tenant: 't' }, { tenant: 't' }, { email: 'a@x' }]);
    expect(isDuplicateKeyError(await caught(sparse.insertOne({ email: 'a@x' })))).toBe(true);
  });

  it('refuses to build a unique index over existing duplicates', async () => {
    await keyed().insertMany([{ email: 'a@x' }, { email: 'a@x' }]);
    expect(isDuplicateKeyError(await caught(keyed().createIndex({ email: 1 }, { unique: true })))).toBe(true);
  });

  it('rebuilds an index whose options changed: unique, then sparse', async () => {
    await keyed().createIndex({ email: 1 });
    await keyed().createIndex({ email: 1 }, { unique: true });
    await keyed().insertOne({ tenant: 't', email: 'a@x' });
    expect(isDuplicateKeyError(await caught(keyed().insertOne({ email: 'a@x' })))).toBe(true);
    await keyed().insertOne({ tenant: 'no email' });
    expect(isDuplicateKeyError(await caught(keyed().insertOne({ tenant: 'no email either' })))).toBe(true);
    expect(await keyed().createIndex({ email: 1 }, { unique: true, sparse: true })).toBe('email_1');
    await keyed().insertOne({ tenant: 'no email either' });
    expect(isDuplicateKeyError(await caught(keyed().insertOne({ email: 'a@x' })))).toBe(true);
  });

  it('drops an index by its keys, once', async () => {
    await keyed().createIndex({ tenant: 1, key: -1 }, { unique: true });
    await keyed().insertOne({ tenant: 't', key: 'k' });
    expect(await keyed().dropIndex({ tenant: 1, key: -1 })).toBe(true);
    await keyed().insertOne({ tenant: 't', key: 'k' });
    expect(await keyed().countDocuments({ tenant: 't' })).toBe(2);
    expect(await keyed().dropIndex({ tenant: 1, key: -1 })).toBe(false);
    expect(await context.store().collection('never-used').dropIndex({ tenant: 1 })).toBe(false);
  });

  it.runIf(context.durable)('keeps a dropped index dropped across reopen', async () => {
    await keyed().createIndex({ email: 1 }, { unique: true });
    await keyed().dropIndex({ email: 1 });
    await context.reopen();
    await keyed().insertMany([{ email: 'a@x' }, { email: 'a@x' }]);
    expect(await keyed().countDocuments({ email: 'a@x' })).toBe(2);
  });

  it('finds, counts, updates and deletes a document once when several of its elements are in an indexed range', async () => {
    const scores = context.store().collection<{ _id: string; n: number | number[]; seen?: boolean }>('scores');
    await scores.createIndex({ n: 1 });
    await scores.insertMany([
      { _id: 'a', n: [1, 2] },
      { _id: 'b', n: 5 },
    ]);
    expect(idsOf(await scores.find({ n: { $gt: 0 } }))).toEqual(['a', 'b']);
    expect(await scores.countDocuments({ n: { $gt: 0 } })).toBe(2);
    expect((await scores.updateMany({ n: { $gt: 0 } }, { $set: { seen: true } })).matchedCount).toBe(2);
    expect(await scores.countDocuments({ seen: true })).toBe(2);
    expect(await scores.deleteMany({ n: { $gte: 1 } })).toEqual({ deletedCount: 2 });
  });

  it('never drops the _id index', async () => {
    await expect(keyed().dropIndex({ _id: 1 })).rejects.toThrow(StoreError);
  });

  it('refuses an empty index, a bad direction and a compound sparse index', async () => {
    await expect(keyed().createIndex({})).rejects.toThrow(StoreError);
    await expect(keyed().createIndex({ email: 2 as 1 })).rejects.toThrow(StoreError);
    await expect(keyed().createIndex({ tenant: 1, key: 1 }, { sparse: true })).rejects.toThrow(StoreError);
  });
}
