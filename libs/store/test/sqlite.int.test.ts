import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isDuplicateKeyError, isStoreError, openStore } from '../src/index.ts';
import type { Store, StoreError } from '../src/index.ts';
import { describeCollectionContract } from './collection-contract.ts';

/** The package's entry, for the child process (Node strips the types). */
const STORE_ENTRY = fileURLToPath(new URL('../src/index.ts', import.meta.url));

async function temporaryDirectory(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'ars-store-sqlite-'));
}

describeCollectionContract('embedded sqlite store on disk', { durable: true }, async () => {
  const dataDir = await temporaryDirectory();
  return {
    open: () => openStore({ dataDir, database: 'contract', engine: 'sqlite' }),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
});

describeCollectionContract('embedded sqlite store in memory', { durable: false }, async () => ({
  open: () => openStore({ dataDir: '/nonexistent', database: 'contract', engine: 'sqlite', inMemory: true }),
  cleanup: async () => undefined,
}));

interface Job {
  _id: string;
  status: string;
  rank: number;
  by?: string;
}

function jobs(count: number): Job[] {
  return Array.from({ length: count }, (_, i) => ({ _id: `j${String(i).padStart(4, '0')}`, status: 'ready', rank: i }));
}

/** Claims ready jobs one at a time until none is left; the ids in claim order. */
async function claimAll(store: Store, by: string): Promise<string[]> {
  const claimed: string[] = [];
  for (;;) {
    const job = await store
      .collection<Job>('jobs')
      .findOneAndUpdate({ status: 'ready' }, { $set: { status: 'claimed', by } }, { sort: { rank: 1 } });
    if (job === null) return claimed;
    claimed.push(job._id);
    // Let the other claimant in between.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('embedded sqlite store files and processes', () => {
  let dataDir: string;
  const stores: Store[] = [];
  const open = async (options: { engine?: 'nedb' | 'sqlite'; onBackgroundError?: (e: StoreError) => void } = {}) => {
    const store = await openStore({ dataDir, database: 'svc', engine: 'sqlite', ...options });
    stores.push(store);
    return store;
  };

  beforeEach(async () => {
    dataDir = await temporaryDirectory();
  });

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close().catch(() => undefined)));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps one SQLite database per store under <dataDir>/<database>/store.sqlite', async () => {
    const store = await open();
    expect(store.kind).toBe('embedded');
    expect(store.compoundIndexes).toBe(true);
    await store.collection('tasks').insertOne({ _id: 't' });
    await store.collection('runs.archive').insertOne({ _id: 'r' });
    const files = await readdir(join(dataDir, 'svc'));
    expect(files.filter((file) => !file.startsWith('store.sqlite-'))).toEqual(['store.sqlite']);
  });

  it('keeps collections whose names differ only in case apart, as files and MongoDB do', async () => {
    const store = await open();
    const [upper, lower] = ['Tasks', 'tasks'].map((name) => store.collection<{ _id: string; n: number }>(name));
    await upper?.createIndex({ n: 1 }, { unique: true });
    await upper?.insertOne({ _id: 'upper', n: 1 });
    await lower?.insertOne({ _id: 'lower', n: 1 });
    expect(await upper?.find({})).toEqual([{ _id: 'upper', n: 1 }]);
    expect(await lower?.find({ n: 1 })).toEqual([{ _id: 'lower', n: 1 }]);
  });

  it('keeps documents, compound and multikey indexes across close and reopen', async () => {
    const first = await open();
    const tasks = first.collection<{ _id: string; tenant: string; key: string; tags: string[] }>('tasks');
    await tasks.createIndex({ tenant: 1, key: 1 }, { unique: true });
    await tasks.createIndex({ tags: 1 });
    await tasks.insertMany([
      { _id: 'a', tenant: 't', key: 'k1', tags: ['x', 'y'] },
      { _id: 'b', tenant: 't', key: 'k2', tags: ['y'] },
    ]);
    await first.close();
    const second = await open();
    const again = second.collection<{ _id: string; tenant: string; key: string; tags: string[] }>('tasks');
    expect(await again.find({ tags: 'y' }, { sort: { _id: 1 } })).toEqual([
      { _id: 'a', tenant: 't', key: 'k1', tags: ['x', 'y'] },
      { _id: 'b', tenant: 't', key: 'k2', tags: ['y'] },
    ]);
    await expect(again.insertOne({ _id: 'c', tenant: 't', key: 'k2', tags: [] })).rejects.toSatisfy(
      isDuplicateKeyError,
    );
  });

  it("sees another store's writes and indexes on the same directory", async () => {
    const [left, right] = [await open(), await open()];
    const leftItems = left.collection<{ _id: string; n: number }>('items');
    const rightItems = right.collection<{ _id: string; n: number }>('items');
    await leftItems.insertMany([
      { _id: 'a', n: 1 },
      { _id: 'b', n: 2 },
    ]);
    expect(await rightItems.countDocuments({ n: { $gte: 1 } })).toBe(2);
    await rightItems.createIndex({ n: 1 }, { unique: true });
    await expect(leftItems.insertOne({ _id: 'c', n: 2 })).rejects.toSatisfy(isDuplicateKeyError);
    await leftItems.updateOne({ _id: 'a' }, { $set: { n: 5 } });
    // The right store planned through its index: the left store's update moved the entry.
    expect(await rightItems.find({ n: 5 })).toEqual([{ _id: 'a', n: 5 }]);
    expect(await rightItems.dropIndex({ n: 1 })).toBe(true);
    await leftItems.insertOne({ _id: 'c', n: 2 });
    expect(await leftItems.find({ n: 2 }, { sort: { _id: 1 } })).toEqual([
      { _id: 'b', n: 2 },
      { _id: 'c', n: 2 },
    ]);
  });

  it('gives each of 200 concurrent claims through two stores on one directory a different document', async () => {
    const [left, right] = [await open(), await open()];
    await left.collection<Job>('jobs').createIndex({ status: 1, rank: 1 });
    await left.collection<Job>('jobs').insertMany(jobs(200));
    const claims = await Promise.all(
      Array.from({ length: 220 }, (_, i) =>
        (i % 2 === 0 ? left : right)
          .collection<Job>('jobs')
          .findOneAndUpdate(
            { status: 'ready' },
            { $set: { status: 'claimed', by: `s${i % 2}` } },
            { sort: { rank: 1 } },
          ),
      ),
    );
    const claimed = claims.filter((claim) => claim !== null).map((claim) => claim._id);
    expect(claimed).toHaveLength(200);
    expect(new Set(claimed).size).toBe(200);
    expect(claims.filter((claim) => claim === null)).toHaveLength(20);
    expect(await right.collection<Job>('jobs').countDocuments({ status: 'claimed' })).toBe(200);
  });

  it('claims each document exactly once with another process claiming at the same time', async () => {
    const store = await open();
    await store.collection<Job>('jobs').createIndex({ status: 1, rank: 1 });
    await store.collection<Job>('jobs').insertMany(jobs(1000));
    const child = startChild(dataDir);
    await child.ready;
    child.go();
    await child.claiming;
    const mine = await claimAll(store, 'parent');
    const theirs = await child.claims;
    expect(mine.length).toBeGreaterThan(0);
    expect(theirs.length).toBeGreaterThan(0);
    expect(new Set([...mine, ...theirs]).size).toBe(1000);
    expect(mine.length + theirs.length).toBe(1000);
    expect(await store.collection<Job>('jobs').countDocuments({ by: 'child' })).toBe(theirs.length);
  });

  it("waits for another process's write lock without blocking, reads going on, writes in call order", async () => {
    const store = await open();
    const tasks = store.collection<{ _id: string; n: number }>('tasks');
    await tasks.insertOne({ _id: 'seed', n: 0 });
    const blocker = new DatabaseSync(join(dataDir, 'svc', 'store.sqlite'));
    blocker.exec('BEGIN IMMEDIATE');
    const insert = tasks.insertOne({ _id: 'a', n: 1 });
    const update = tasks.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
    expect(await tasks.find({})).toEqual([{ _id: 'seed', n: 0 }]);
    blocker.exec('COMMIT');
    blocker.close();
    await insert;
    expect((await update).modifiedCount).toBe(1);
    expect(await tasks.findOne({ _id: 'a' })).toEqual({ _id: 'a', n: 2 });
  });

  it('keeps each of the writes issued at once atomic: a failing one undoes only itself', async () => {
    const store = await open();
    const tasks = store.collection<{ _id: string; n: number }>('tasks');
    await tasks.createIndex({ n: 1 }, { unique: true });
    await tasks.insertOne({ _id: 'seed', n: 0 });
    const outcomes = await Promise.allSettled([
      tasks.insertOne({ _id: 'a', n: 1 }),
      tasks.insertMany([
        { _id: 'b', n: 2 },
        { _id: 'c', n: 0 },
      ]),
      tasks.updateOne({ _id: 'a' }, { $inc: { n: 10 } }),
      tasks.insertOne({ _id: 'seed', n: 5 }),
      tasks.findOne({ _id: 'a' }),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(outcomes[4]).toEqual({ status: 'fulfilled', value: { _id: 'a', n: 11 } });
    expect(await tasks.find({}, { sort: { n: 1 } })).toEqual([
      { _id: 'seed', n: 0 },
      { _id: 'a', n: 11 },
    ]);
    expect(await tasks.countDocuments({ n: 2 })).toBe(0);
  });

  it('keeps the one-change writes issued at once, made without savepoints, and undoes only a refused one', async () => {
    const store = await open();
    const plain = store.collection<{ _id: string; n: number }>('plain');
    await plain.insertMany([
      { _id: 'a', n: 1 },
      { _id: 'b', n: 2 },
    ]);
    const outcomes = await Promise.allSettled([
      plain.insertOne({ _id: 'c', n: 3 }),
      plain.updateOne({ _id: 'a' }, { $inc: { n: 10 } }),
      plain.insertOne({ _id: 'b', n: 5 }),
      plain.deleteOne({ _id: 'b' }),
      plain.findOneAndUpdate({ _id: 'd' }, { $set: { n: 4 } }, { upsert: true, returnDocument: 'after' }),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(isDuplicateKeyError((outcomes[2] as PromiseRejectedResult).reason)).toBe(true);
    expect(await plain.find({}, { sort: { _id: 1 } })).toEqual([
      { _id: 'a', n: 11 },
      { _id: 'c', n: 3 },
      { _id: 'd', n: 4 },
    ]);
  });

  it('keeps a unique index for the writes issued in the same turn as its creation', async () => {
    const store = await open();
    const tasks = store.collection<{ _id: string; n: number }>('tasks');
    await tasks.insertOne({ _id: 'seed', n: 0 });
    const outcomes = await Promise.allSettled([
      tasks.createIndex({ n: 1 }, { unique: true }),
      tasks.insertOne({ _id: 'a', n: 1 }),
      tasks.insertOne({ _id: 'b', n: 1 }),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(isDuplicateKeyError((outcomes[2] as PromiseRejectedResult).reason)).toBe(true);
    expect(await tasks.find({ n: 1 })).toEqual([{ _id: 'a', n: 1 }]);
  });

  it('commits the writes of one turn together, each visible to another process once it resolved', async () => {
    const store = await open();
    const tasks = store.collection<{ _id: string; n: number }>('tasks');
    await tasks.insertOne({ _id: 'seed', n: 0 });
    const reader = new DatabaseSync(join(dataDir, 'svc', 'store.sqlite'));
    const count = () => (reader.prepare('SELECT count(*) AS n FROM "c:tasks"').get() as { n: number }).n;
    try {
      const writes = Array.from({ length: 20 }, (_, i) => tasks.insertOne({ _id: `t${i}`, n: i + 1 }));
      // Begun in this turn, committed at its end: another connection sees none of them yet.
      expect(count()).toBe(1);
      await writes[0];
      expect(count()).toBe(21);
      await Promise.all(writes);
    } finally {
      reader.close();
    }
  });

  it('reads a document by _id in autocommit: the latest commit of another store, this turn’s writes once committed', async () => {
    const [mine, theirs] = [await open(), await open()];
    const ours = mine.collection<{ _id: string; n: number; tag?: string }>('tasks');
    const other = theirs.collection<{ _id: string; n: number; tag?: string }>('tasks');
    await ours.createIndex({ tag: 1 });
    await other.insertOne({ _id: 'a', n: 1, tag: 'x' });
    expect(await ours.findOne({ _id: 'a' })).toEqual({ _id: 'a', n: 1, tag: 'x' });
    await other.updateOne({ _id: 'a' }, { $set: { n: 2 } });
    expect(await ours.find({ _id: 'a', n: 2 })).toEqual([{ _id: 'a', n: 2, tag: 'x' }]);
    // Another store drops the index this one cached: a lookup by _id never reads it.
    await other.dropIndex({ tag: 1 });
    expect(await ours.findOne({ _id: 'a', tag: 'x' })).toEqual({ _id: 'a', n: 2, tag: 'x' });
    // A write of this turn is read only with its commit, and the read settles after it.
    const order: string[] = [];
    const write = ours.updateOne({ _id: 'a' }, { $set: { n: 3 } }).then(() => order.push('write'));
    const read = ours.findOne({ _id: 'a' }).then((doc) => order.push(`read ${doc?.n}`));
    await Promise.all([write, read]);
    expect(order).toEqual(['write', 'read 3']);
    expect(await ours.findOne({ _id: 'missing' })).toBeNull();
  });

  it('opens one new directory from several processes starting at once, as replicas of a service do', async () => {
    const script = `
      import { openStore } from ${JSON.stringify(STORE_ENTRY)};
      const store = await openStore({ dataDir: process.argv[1], database: 'svc', engine: 'sqlite' });
      // What a service does first: declare its indexes, then write.
      for (const name of ['tasks', 'leases', 'states']) await store.collection(name).createIndex({ owner: 1, at: -1 });
      await store.collection('tasks').insertOne({ _id: process.argv[2] });
      await store.close();
    `;
    const openAtOnce = (directory: string, count: number) =>
      Promise.all(
        Array.from({ length: count }, (_, i) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', script, directory, `p${i}`], {
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          return new Promise<string>((resolve) => child.once('exit', (code) => resolve(code === 0 ? '' : stderr)));
        }),
      );
    // The race is on the first open of the file: each round starts from a new directory.
    for (let round = 0; round < 5; round += 1) {
      const directory = join(dataDir, `round-${round}`);
      const failures = (await openAtOnce(directory, 3)).filter((stderr) => stderr !== '');
      expect(failures).toEqual([]);
      const store = await openStore({ dataDir: directory, database: 'svc', engine: 'sqlite' });
      expect((await store.collection('tasks').find({})).map((task) => task._id).sort()).toEqual(['p0', 'p1', 'p2']);
      await store.close();
    }
  });

  // The writer is a Node process of its own, importing the store's TypeScript: slow to start on a loaded host.
  it('keeps every write that resolved when the process is killed right after', { timeout: 90_000 }, async () => {
    const script = `
      import { openStore } from ${JSON.stringify(STORE_ENTRY)};
      const store = await openStore({ dataDir: ${JSON.stringify(dataDir)}, database: 'svc', engine: 'sqlite' });
      const tasks = store.collection('tasks');
      for (let i = 0; ; i += 1) {
        await Promise.all([tasks.insertOne({ _id: 'a' + i }), tasks.insertOne({ _id: 'b' + i })]);
        process.stdout.write(i + '\\n');
      }
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let acknowledged = -1;
    const lines = createInterface({ input: child.stdout });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      lines.on('line', (line) => {
        acknowledged = Number(line);
        if (acknowledged === 100) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      // A child that ends on its own (it failed to start or to write) is the failure to report, not a hang.
      void exited.then((code) =>
        reject(new Error(`the writer exited (${String(code)}) after ${acknowledged + 1} turns`)),
      );
    });
    await exited;
    const store = await open();
    const stored = new Set((await store.collection('tasks').find({})).map((task) => task._id));
    for (let i = 0; i <= acknowledged; i += 1) {
      expect(stored.has(`a${i}`) && stored.has(`b${i}`)).toBe(true);
    }
  });

  it('enforces a unique index across two stores, including one it was declared by after it cached none', async () => {
    const [left, right] = [await open(), await open()];
    const leftUsers = left.collection<{ _id: string; email: string }>('users');
    const rightUsers = right.collection<{ _id: string; email: string }>('users');
    await rightUsers.insertOne({ _id: 'u0', email: 'zero@x' });
    await leftUsers.createIndex({ email: 1 }, { unique: true });
    await leftUsers.insertOne({ _id: 'u1', email: 'a@x' });
    await expect(rightUsers.insertOne({ _id: 'u2', email: 'a@x' })).rejects.toSatisfy(isDuplicateKeyError);
    await expect(rightUsers.updateOne({ _id: 'u0' }, { $set: { email: 'a@x' } })).rejects.toSatisfy(
      isDuplicateKeyError,
    );
    expect(await leftUsers.countDocuments()).toBe(2);
  });

  it('leaves nothing of an insertMany that fails on a duplicate key, index entries included', async () => {
    const store = await open();
    const users = store.collection<{ _id: string; email: string; tags?: string[] }>('users');
    await users.createIndex({ email: 1 }, { unique: true });
    await users.createIndex({ tags: 1 });
    await users.insertOne({ _id: 'kept', email: 'kept@x' });
    const failed = users.insertMany([
      { _id: 'n1', email: 'n1@x', tags: ['t'] },
      { _id: 'n2', email: 'kept@x' },
    ]);
    await expect(failed).rejects.toSatisfy(isDuplicateKeyError);
    expect(await users.find({})).toEqual([{ _id: 'kept', email: 'kept@x' }]);
    expect(await users.find({ tags: 't' })).toEqual([]);
    await users.insertOne({ _id: 'n1', email: 'n1@x' });
    expect(await users.countDocuments({ email: 'n1@x' })).toBe(1);
  });

  it('removes a deleted document from every index: no entry of it is left, its unique keys are free', async () => {
    const store = await open();
    type User = { _id: string; email: string; tags?: string[]; team?: { name: string }; nick?: string };
    const users = store.collection<User>('users');
    await users.createIndex({ email: 1 }, { unique: true });
    await users.createIndex({ tags: 1 });
    await users.createIndex({ 'team.name': 1, email: 1 });
    await users.createIndex({ nick: 1 }, { unique: true, sparse: true });
    await users.insertMany([
      { _id: 'a', email: 'a@x', tags: ['t', 'u', 't'], team: { name: 'red' }, nick: 'ace' },
      { _id: 'b', email: 'b@x', tags: ['t'] },
      { _id: 'c', email: 'c@x', team: { name: 'red' } },
    ]);
    await users.updateOne({ _id: 'a' }, { $set: { email: 'a2@x' }, $push: { tags: 'v' } });
    expect((await users.deleteOne({ _id: 'a' })).deletedCount).toBe(1);
    expect((await users.deleteMany({ tags: 't' })).deletedCount).toBe(1);
    await store.close();

    const file = new DatabaseSync(join(dataDir, 'svc', 'store.sqlite'));
    const ids = file.prepare('SELECT DISTINCT id FROM "e:users"').all();
    const entries = file.prepare('SELECT count(*) AS n FROM "e:users"').get() as { n: number };
    file.close();
    // c's three keys are all that is left: email, tags (missing, so null: the index is not sparse), team.name + email.
    expect(
      ids.map((row) =>
        Buffer.from(row['id'] as Uint8Array)
          .swap16()
          .toString('utf16le'),
      ),
    ).toEqual(['c']);
    expect(entries.n).toBe(3);

    const again = (await open()).collection<User>('users');
    await again.insertMany([
      { _id: 'd', email: 'a2@x', nick: 'ace', tags: ['t'] },
      { _id: 'e', email: 'b@x' },
    ]);
    expect((await again.find({ tags: 't' })).map((user) => user._id)).toEqual(['d']);
    expect((await again.find({ 'team.name': 'red' })).map((user) => user._id)).toEqual(['c']);
  });

  it('moves the keys of every index an update reaches, through a parent path or a nested one, and only those', async () => {
    const store = await open();
    type Member = { _id: string; team?: { name: string; size?: number }; tags?: string[]; note?: string; n?: number };
    const members = store.collection<Member>('members');
    await members.createIndex({ 'team.name': 1 });
    await members.createIndex({ tags: 1 });
    await members.createIndex({ n: 1 }, { unique: true, sparse: true });
    await members.insertOne({ _id: 'm', team: { name: 'red', size: 1 }, tags: ['a'], n: 1 });
    const ids = async (filter: Record<string, unknown>) =>
      (await members.find(filter as never)).map((member) => member._id);

    await members.updateOne({ _id: 'm' }, { $set: { note: 'unindexed' }, $inc: { 'team.size': 1 } });
    expect([await ids({ 'team.name': 'red' }), await ids({ tags: 'a' }), await ids({ n: 1 })]).toEqual([
      ['m'],
      ['m'],
      ['m'],
    ]);
    await members.updateOne({ _id: 'm' }, { $set: { team: { name: 'blue' } } });
    expect([await ids({ 'team.name': 'red' }), await ids({ 'team.name': 'blue' })]).toEqual([[], ['m']]);
    await members.updateOne({ _id: 'm' }, { $push: { tags: 'b' } });
    expect(await ids({ tags: 'b' })).toEqual(['m']);
    await members.updateOne({ _id: 'm' }, { $unset: { n: true } });
    expect(await ids({ n: 1 })).toEqual([]);
    await members.insertOne({ _id: 'other', n: 2 });
    await expect(members.updateOne({ _id: 'm' }, { $inc: { n: 1 } })).resolves.toMatchObject({ modifiedCount: 1 });
    await expect(members.updateOne({ _id: 'm' }, { $set: { n: 2 } })).rejects.toSatisfy(isDuplicateKeyError);
    expect([await ids({ n: 1 }), await ids({ n: 2 })]).toEqual([['m'], ['other']]);
  });

  it("drops the entries' index by _id that stores created by earlier versions kept", async () => {
    const first = await open();
    const users = first.collection<{ _id: string; email: string }>('users');
    await users.createIndex({ email: 1 }, { unique: true });
    await users.insertMany([
      { _id: 'a', email: 'a@x' },
      { _id: 'b', email: 'b@x' },
    ]);
    await first.close();
    const path = join(dataDir, 'svc', 'store.sqlite');
    const indexNames = () => {
      const file = new DatabaseSync(path);
      const rows = file.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'e:users'`).all();
      file.close();
      return rows.map((row) => row['name']);
    };
    const legacy = new DatabaseSync(path);
    legacy.exec('CREATE INDEX "e:users:id" ON "e:users" (id)');
    legacy.close();
    expect(indexNames()).toContain('e:users:id');

    const again = (await open()).collection<{ _id: string; email: string }>('users');
    await again.deleteOne({ _id: 'a' });
    await again.insertOne({ _id: 'c', email: 'a@x' });
    expect(await again.find({}, { sort: { _id: 1 } })).toEqual([
      { _id: 'b', email: 'b@x' },
      { _id: 'c', email: 'a@x' },
    ]);
    expect(indexNames()).not.toContain('e:users:id');
  });

  it('lets documents of one updateMany trade keys of a unique index, as the nedb engine does', async () => {
    const store = await open();
    const ranks = store.collection<{ _id: string; n: number }>('ranks');
    await ranks.createIndex({ n: 1 }, { unique: true });
    await ranks.insertMany([1, 2, 3].map((n) => ({ _id: `r${n}`, n })));
    expect((await ranks.updateMany({}, { $inc: { n: 1 } })).modifiedCount).toBe(3);
    expect((await ranks.find({}, { sort: { n: 1 } })).map((rank) => rank.n)).toEqual([2, 3, 4]);
  });

  it('imports a nedb datafile: the latest version of each document and its indexes, then renames it', async () => {
    await mkdir(join(dataDir, 'svc'), { recursive: true });
    const datafile = join(dataDir, 'svc', 'tasks.db');
    const lines = [
      '{"_id":"a","key":"k1","n":0}',
      '{"_id":"b","key":"k2"}',
      '{"_id":"gone","key":"k3"}',
      '{"$$indexCreated":{"fieldName":"key","unique":true,"sparse":false}}',
      '{"_id":"a","key":"k1","n":2}',
      '{"$$deleted":true,"_id":"gone"}',
    ];
    await writeFile(datafile, lines.join('\n') + '\n');
    const reports: StoreError[] = [];
    const store = await open({ onBackgroundError: (error) => reports.push(error) });
    const tasks = store.collection<{ _id: string; key: string; n?: number }>('tasks');
    expect(await tasks.find({}, { sort: { _id: 1 } })).toEqual([
      { _id: 'a', key: 'k1', n: 2 },
      { _id: 'b', key: 'k2' },
    ]);
    await expect(tasks.insertOne({ _id: 'c', key: 'k2' })).rejects.toSatisfy(isDuplicateKeyError);
    expect((await readdir(join(dataDir, 'svc'))).filter((file) => file.startsWith('tasks'))).toEqual([
      'tasks.db.migrated',
    ]);
    // Read only: the old datafile is kept as it was.
    expect(await readFile(`${datafile}.migrated`, 'utf8')).toBe(lines.join('\n') + '\n');
    expect(reports).toEqual([]);
  });

  it('reads after import what the nedb engine wrote: dates, nested values, compound indexes', async () => {
    const nedb = await openStore({ dataDir, database: 'svc', engine: 'nedb', compactionIntervalMs: 0 });
    const at = new Date('2026-01-02T03:04:05.678Z');
    const runs = nedb.collection<{ _id: string; tenant: string; key: string; at?: Date; meta?: object }>('runs.v1');
    await runs.createIndex({ tenant: 1, key: 1 }, { unique: true });
    await runs.insertMany([
      { _id: 'r1', tenant: 't', key: 'k', at, meta: { steps: [1, { deep: null }] } },
      { _id: 'r2', tenant: 't', key: 'l' },
    ]);
    const written = await runs.find({}, { sort: { _id: 1 } });
    await nedb.close();
    const store = await open();
    const imported = store.collection<{ _id: string; tenant: string; key: string }>('runs.v1');
    expect(await imported.find({}, { sort: { _id: 1 } })).toEqual(written);
    expect(await imported.findOne({ _id: 'r1' })).toMatchObject({ at });
    await expect(imported.insertOne({ _id: 'r3', tenant: 't', key: 'l' })).rejects.toSatisfy(isDuplicateKeyError);
  });

  it('imports a datafile once: one found again after its import committed is only renamed', async () => {
    await mkdir(join(dataDir, 'svc'), { recursive: true });
    const datafile = join(dataDir, 'svc', 'tasks.db');
    await writeFile(datafile, '{"_id":"a"}\n{"_id":"b"}\n');
    await (await open()).close();
    // As if the process had crashed between the import's commit and the rename.
    await copyFile(`${datafile}.migrated`, datafile);
    const reports: StoreError[] = [];
    const store = await open({ onBackgroundError: (error) => reports.push(error) });
    expect(await store.collection('tasks').countDocuments()).toBe(2);
    expect((await readdir(join(dataDir, 'svc'))).filter((file) => file.startsWith('tasks'))).toEqual([
      'tasks.db.migrated',
    ]);
    expect(reports).toEqual([]);
  });

  it('leaves alone, and reports, a datafile whose collection already has documents in SQLite', async () => {
    const first = await open();
    await first.collection('tasks').insertOne({ _id: 'sqlite' });
    await first.close();
    await writeFile(join(dataDir, 'svc', 'tasks.db'), '{"_id":"nedb"}\n');
    const reports: StoreError[] = [];
    const store = await open({ onBackgroundError: (error) => reports.push(error) });
    expect(await store.collection('tasks').find({})).toEqual([{ _id: 'sqlite' }]);
    expect(reports.map((error) => error.message)).toEqual([expect.stringContaining('tasks.db left alone')]);
    expect(await readdir(join(dataDir, 'svc'))).toContain('tasks.db');
  });

  it('refuses to open over a datafile nedb cannot load, importing nothing', async () => {
    await mkdir(join(dataDir, 'svc'), { recursive: true });
    await writeFile(join(dataDir, 'svc', 'broken.db'), 'not json\nstill not json\n{"_id":"ok"}\n');
    await expect(open()).rejects.toSatisfy(isStoreError);
    expect(await readdir(join(dataDir, 'svc'))).toContain('broken.db');
  });

  it('refuses an unknown engine', async () => {
    await expect(openStore({ dataDir, database: 'svc', engine: 'leveldb' as unknown as 'sqlite' })).rejects.toSatisfy(
      isStoreError,
    );
  });
});

/**
 * A separate Node process claiming jobs in the same directory: `ready` once
 * its store is open; after `go()`, `claiming` once it claimed its first
 * job, `claims` (its claimed ids) once it ran out of jobs.
 */
function startChild(dataDir: string): {
  ready: Promise<void>;
  go: () => void;
  claiming: Promise<void>;
  claims: Promise<string[]>;
} {
  const script = `
    import { once } from 'node:events';
    import { openStore } from ${JSON.stringify(STORE_ENTRY)};
    const store = await openStore({ dataDir: ${JSON.stringify(dataDir)}, database: 'svc', engine: 'sqlite' });
    process.stdout.write('ready\\n');
    await once(process.stdin, 'data');
    const claimed = [];
    for (;;) {
      const job = await store.collection('jobs').findOneAndUpdate(
        { status: 'ready' }, { $set: { status: 'claimed', by: 'child' } }, { sort: { rank: 1 } });
      if (job === null) break;
      if (claimed.push(job._id) === 1) process.stdout.write('claiming\\n');
      await new Promise((resolve) => setImmediate(resolve));
    }
    await store.close();
    process.stdout.write(JSON.stringify(claimed) + '\\n');
    process.stdin.destroy();
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const line = await lines.next();
    if (line.done === true) throw new Error(`child ended early: ${stderr}`);
    return line.value;
  };
  const ready = next().then(() => undefined);
  const claiming = ready.then(next).then(() => undefined);
  return {
    ready,
    go: () => child.stdin.write('go\n'),
    claiming,
    claims: claiming.then(next).then((line) => JSON.parse(line) as string[]),
  };
}
