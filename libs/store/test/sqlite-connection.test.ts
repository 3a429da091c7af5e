import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { COMMIT_SOON_MAX_OPERATIONS, Connection } from '../src/sqlite-connection.ts';

const INSERT = 'INSERT INTO t (id) VALUES (?)';

/** Counts the times `connection` runs `sql` from now on: `.count`. */
function counting(connection: Connection, sql: string): { count: number } {
  const seen = { count: 0 };
  const statementOf = connection.statement.bind(connection);
  connection.statement = (statement: string) => {
    if (statement === sql) seen.count += 1;
    return statementOf(statement);
  };
  return seen;
}

describe('the sqlite connection: writes of one turn share a transaction', () => {
  let connection: Connection;
  let savepoints: { count: number };

  beforeEach(async () => {
    connection = new Connection(':memory:');
    await connection.transaction('write', () => connection.exec('CREATE TABLE t (id TEXT PRIMARY KEY NOT NULL)'));
    savepoints = counting(connection, 'SAVEPOINT member');
  });

  afterEach(() => connection.close());

  const stored = () =>
    connection.transaction('read', () =>
      (connection.statement('SELECT id FROM t ORDER BY id').all() as { id: string }[]).map((row) => row.id),
    );
  const failure = new Error('the work failed');
  const failAfter = (work: () => void) => () => {
    work();
    throw failure;
  };
  /** Writes sent in one turn, so that they share a batch: their outcomes, and the statuses of those. */
  const batch = async (...works: (() => unknown)[]) => {
    const outcomes = await Promise.allSettled(works.map((work) => connection.transaction('write', work)));
    return { outcomes, statuses: outcomes.map((outcome) => outcome.status) };
  };

  it('rolls back a lone write that fails after its changes, and reports its error', async () => {
    const write = connection.transaction(
      'write',
      failAfter(() => {
        connection.change(INSERT, 'a');
        connection.change(INSERT, 'b');
      }),
    );
    await expect(write).rejects.toBe(failure);
    expect(await stored()).toEqual([]);
    expect(savepoints.count).toBe(0);
  });

  it("undoes a later write that fails after its changes, keeping the others' writes", async () => {
    const { statuses } = await batch(
      () => connection.change(INSERT, 'a'),
      failAfter(() => {
        connection.change(INSERT, 'b');
        connection.change(INSERT, 'c');
      }),
      () => connection.change(INSERT, 'd'),
    );
    expect(statuses).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await stored()).toEqual(['a', 'd']);
    expect(savepoints.count).toBe(2);
  });

  it('takes no savepoint for a later write whose one change is its last, nor for one that changes nothing', async () => {
    const { statuses } = await batch(
      () => connection.change(INSERT, 'a'),
      () => connection.lastChange(INSERT, 'b'),
      () => connection.statement('SELECT count(*) FROM t').get(),
      // Refused by the primary key: the failed statement leaves nothing, the batch goes on.
      () => connection.lastChange(INSERT, 'a'),
      () => connection.lastChange(INSERT, 'c'),
    );
    expect(statuses).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(await stored()).toEqual(['a', 'b', 'c']);
    expect(savepoints.count).toBe(0);
  });

  it('abandons the whole batch when a write fails after a last change it made without a savepoint', async () => {
    const { outcomes, statuses } = await batch(
      () => connection.change(INSERT, 'a'),
      failAfter(() => connection.lastChange(INSERT, 'b')),
    );
    expect(statuses).toEqual(['rejected', 'rejected']);
    expect((outcomes[0] as PromiseRejectedResult).reason).toBe(failure);
    expect(await stored()).toEqual([]);
  });

  it('refuses a change after the last one, abandoning the batch', async () => {
    const { outcomes, statuses } = await batch(
      () => connection.change(INSERT, 'a'),
      () => {
        connection.lastChange(INSERT, 'b');
        connection.change(INSERT, 'c');
      },
    );
    expect(statuses).toEqual(['rejected', 'rejected']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/a change after the last change/);
    expect(await stored()).toEqual([]);
  });

  it('keeps a savepoint taken before the last change: a write failing after both is undone alone', async () => {
    const { statuses } = await batch(
      () => connection.change(INSERT, 'a'),
      failAfter(() => {
        connection.change(INSERT, 'b');
        connection.lastChange(INSERT, 'c');
      }),
    );
    expect(statuses).toEqual(['fulfilled', 'rejected']);
    expect(await stored()).toEqual(['a']);
    expect(savepoints.count).toBe(1);
  });
});

describe('the sqlite connection: after the commit', () => {
  it('runs afterCommit in the commit’s turn, once what awaited the writes went on, and only for a turn that wrote', async () => {
    const order: string[] = [];
    const connection = new Connection(':memory:', { afterCommit: () => order.push('afterCommit') });
    try {
      await connection.transaction('write', () => connection.exec('CREATE TABLE t (id TEXT PRIMARY KEY NOT NULL)'));
      expect(order).toEqual([]); // this continuation runs before it too
      await new Promise((resolve) => setImmediate(resolve));
      expect(order).toEqual(['afterCommit']);
      order.length = 0;
      const write = (id: string) => connection.transaction('write', () => connection.change(INSERT, id));
      const written = Promise.all([write('a'), write('b')]).then(async () => {
        order.push('continuation');
        await Promise.resolve(); // a further await, still before the end of the turn
        order.push('continuation, later');
        // A timer due now runs at the start of the next turn, before that turn's immediates.
        setTimeout(() => order.push('next turn'), 0);
        const due = performance.now() + 3;
        while (performance.now() < due) order.length += 0; // let the timer fall due
      });
      await written;
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(order).toEqual(['continuation', 'continuation, later', 'afterCommit', 'next turn']);
      // Reads alone commit nothing in a batch: no call.
      order.length = 0;
      await connection.transaction('read', () => connection.statement('SELECT id FROM t').all());
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(order).toEqual([]);
    } finally {
      connection.close();
    }
  });
});

describe('the sqlite connection: when a batch commits', () => {
  let dir: string;
  const opened: Connection[] = [];
  const open = (location: string, options?: ConstructorParameters<typeof Connection>[1]) => {
    const connection = new Connection(location, options);
    opened.push(connection);
    return connection;
  };
  const create = (connection: Connection) =>
    connection.transaction('write', () =>
      connection.exec('CREATE TABLE IF NOT EXISTS t (id TEXT PRIMARY KEY NOT NULL)'),
    );
  /** Whether a write resolved before an immediate scheduled just ahead of it ran: committed inside the turn. */
  const committedInsideTurn = async (connection: Connection, id: string) => {
    let immediateRan = false;
    setImmediate(() => (immediateRan = true));
    await connection.transaction('write', () => connection.change(INSERT, id));
    return !immediateRan;
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-sqlite-commit-'));
  });
  afterEach(async () => {
    for (const connection of opened.splice(0)) connection.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('commits a file it shares with other processes once the microtasks before it ran, inside the turn', async () => {
    const connection = open(join(dir, 'shared.sqlite'));
    await create(connection);
    expect(await committedInsideTurn(connection, 'a')).toBe(true);
  });

  it('commits a file it holds alone, and an in-memory database, at the end of the turn', async () => {
    const alone = open(join(dir, 'alone.sqlite'), { exclusive: true });
    const memory = open(':memory:');
    await Promise.all([create(alone), create(memory)]);
    expect(await committedInsideTurn(alone, 'a')).toBe(false);
    expect(await committedInsideTurn(memory, 'a')).toBe(false);
  });

  it('still gives the writes of one callback one transaction on a shared file, each settled after the commit', async () => {
    const connection = open(join(dir, 'shared.sqlite'));
    await create(connection);
    const begins = counting(connection, 'BEGIN IMMEDIATE');
    const settled: string[] = [];
    const write = (id: string) =>
      connection.transaction('write', () => connection.change(INSERT, id)).then(() => settled.push(id));
    await Promise.all([write('a'), write('b'), write('c')]);
    expect(begins.count).toBe(1);
    expect(settled).toEqual(['a', 'b', 'c']);
    // A write made after that commit, still inside the turn, is a transaction of its own.
    await write('d');
    expect(begins.count).toBe(2);
    const rows = await connection.transaction('read', () => connection.statement('SELECT id FROM t ORDER BY id').all());
    expect(rows.map((row) => (row as { id: string }).id)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('commits a file it holds alone inside the turn when asked to commit soon, and the later writes apart', async () => {
    const alone = open(join(dir, 'alone.sqlite'), { exclusive: true });
    await create(alone);
    const commits = counting(alone, 'COMMIT');
    let immediateRan = false;
    setImmediate(() => (immediateRan = true));
    const settled: string[] = [];
    const write = (id: string) =>
      alone.transaction('write', () => alone.change(INSERT, id)).then(() => settled.push(id));
    const first = [write('a'), write('b')];
    alone.commitSoon();
    await Promise.all(first);
    expect(immediateRan).toBe(false);
    expect(settled).toEqual(['a', 'b']);
    expect(commits.count).toBe(1);
    // A write after that commit opens a batch of its own, committed at the end of the turn as before.
    await write('c');
    expect(immediateRan).toBe(true);
    expect(commits.count).toBe(2);
    const rows = await alone.transaction('read', () => alone.statement('SELECT id FROM t ORDER BY id').all());
    expect(rows.map((row) => (row as { id: string }).id)).toEqual(['a', 'b', 'c']);
  });

  it('leaves a batch of more than a few operations for the end of the turn when asked to commit soon', async () => {
    const alone = open(join(dir, 'alone.sqlite'), { exclusive: true });
    await create(alone);
    let immediateRan = false;
    setImmediate(() => (immediateRan = true));
    const ids = Array.from({ length: COMMIT_SOON_MAX_OPERATIONS + 1 }, (_, i) => `w${i}`);
    const writes = ids.map((id) => alone.transaction('write', () => alone.change(INSERT, id)));
    alone.commitSoon();
    await Promise.all(writes);
    expect(immediateRan).toBe(true);
  });

  it('does nothing when asked to commit soon with no write under way, or twice', async () => {
    const memory = open(':memory:');
    await create(memory);
    const commits = counting(memory, 'COMMIT');
    memory.commitSoon();
    const written = memory.transaction('write', () => memory.change(INSERT, 'a'));
    memory.commitSoon();
    memory.commitSoon();
    await written;
    await new Promise((resolve) => setImmediate(resolve));
    expect(commits.count).toBe(1);
    expect(await committedInsideTurn(memory, 'b')).toBe(false);
  });

  it('lets another connection to the shared file write in the same turn once the batch committed', async () => {
    const first = open(join(dir, 'shared.sqlite'));
    const second = open(join(dir, 'shared.sqlite'));
    await create(first);
    const secondBegins = counting(second, 'BEGIN IMMEDIATE');
    let immediateRan = false;
    setImmediate(() => (immediateRan = true));
    await first.transaction('write', () => first.change(INSERT, 'first'));
    // The first connection's lock is free: the second begins at its first try, still inside this turn.
    await second.transaction('write', () => second.change(INSERT, 'second'));
    expect(immediateRan).toBe(false);
    expect(secondBegins.count).toBe(1);
  });
});
