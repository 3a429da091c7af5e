import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Connection } from '../src/sqlite-connection.ts';

const INSERT = 'INSERT INTO t (id) VALUES (?)';

describe('the sqlite connection: writes of one turn share a transaction', () => {
  let connection: Connection;
  let savepoints: number;

  beforeEach(async () => {
    connection = new Connection(':memory:');
    await connection.transaction('write', () => connection.exec('CREATE TABLE t (id TEXT PRIMARY KEY NOT NULL)'));
    savepoints = 0;
    const statementOf = connection.statement.bind(connection);
    connection.statement = (sql: string) => {
      if (sql === 'SAVEPOINT member') savepoints += 1;
      return statementOf(sql);
    };
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
    expect(savepoints).toBe(0);
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
    expect(savepoints).toBe(2);
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
    expect(savepoints).toBe(0);
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
    expect(savepoints).toBe(1);
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
