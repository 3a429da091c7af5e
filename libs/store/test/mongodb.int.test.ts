import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError, openStore } from '../src/index.ts';
import { describeCollectionContract } from './collection-contract.ts';

const mongoUrl = process.env.MONGO_URL;

describe.runIf(mongoUrl)('mongodb adapter', () => {
  const url = mongoUrl as string;
  // One prefix per run; each test gets its own database under it.
  const runPrefix = `ars_store_${randomBytes(4).toString('hex')}`;
  const created = new Set<string>();
  let counter = 0;
  let admin: MongoClient | undefined;
  const adminClient = (): MongoClient => {
    if (admin === undefined) throw new Error('MongoDB admin client not connected');
    return admin;
  };

  beforeAll(async () => {
    admin = await new MongoClient(url).connect();
  });

  afterAll(async () => {
    if (admin === undefined) return;
    for (const database of created) await admin.db(database).dropDatabase();
    await admin.close();
  });

  describeCollectionContract('mongodb store', { durable: true }, async () => {
    counter += 1;
    const database = `${runPrefix}_${counter}`;
    created.add(database);
    return {
      open: () => openStore({ mongoUrl: url, dataDir: '/nonexistent', database }),
      cleanup: async () => {
        await adminClient().db(database).dropDatabase();
        created.delete(database);
      },
    };
  });

  it('reports the mongodb kind and stores string _ids', async () => {
    const database = `${runPrefix}_kind`;
    created.add(database);
    const store = await openStore({ mongoUrl: url, dataDir: '/nonexistent', database });
    try {
      expect(store.kind).toBe('mongodb');
      expect(store.compoundIndexes).toBe(true);
      await store
        .collection<{ _id: string; name: string; v?: number }>('things')
        .updateOne({ name: 'n' }, { $set: { v: 1 } }, { upsert: true });
      const raw = await adminClient().db(database).collection('things').findOne({ name: 'n' });
      expect(typeof raw?._id).toBe('string');
    } finally {
      await store.close();
    }
  });

  it('fails to open with a retryable StoreError when the server cannot be reached', async () => {
    const error = await openStore({
      mongoUrl: 'mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200',
      dataDir: '/nonexistent',
      database: 'unreachable',
    }).catch((caught: unknown) => caught);
    expect(isStoreError(error)).toBe(true);
    expect((error as { retryable: boolean }).retryable).toBe(true);
  });
});
