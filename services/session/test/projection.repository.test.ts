import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
import type { Store } from '@ars/store';
import { createProjectionRepository, SESSION_TASKS_COLLECTION } from '../src/store/projection.repository.ts';
import type { ProjectionRepository } from '../src/store/projection.repository.ts';

const triple = { tenant: 't', user: 'u', session: 's' };
const neighbour = { tenant: 't', user: 'u', session: 's2' };

describe('projection repository (embedded, in memory)', () => {
  let store: Store;
  let projections: ProjectionRepository;

  beforeEach(async () => {
    store = await openStore({ dataDir: '.', database: 'projection_test', inMemory: true });
    projections = createProjectionRepository(store);
    await projections.ensureIndexes();
  });

  afterEach(async () => {
    await store.close();
  });

  it('counts each task of a session once, whatever its events and their redeliveries', async () => {
    await projections.applyTask(triple, 'a', 'pending', 1);
    await projections.applyTask(triple, 'a', 'running', 2);
    await projections.applyTask(triple, 'b', 'pending', 3);
    await projections.applyTask(triple, 'b', 'pending', 3);
    await projections.applyTask(neighbour, 'c', 'pending', 4);
    expect(await projections.taskTotal(triple)).toBe(2);
    expect(await projections.taskTotal(neighbour)).toBe(1);
    expect(await projections.taskCounts(triple)).toMatchObject({ pending: 1, running: 1, complete: 0 });
  });

  it('answers the prior status and first sight alike, whichever order the events come in and however they are hinted', async () => {
    // In order, the spawn hinted as the task's first event.
    expect(await projections.applyTask(triple, 'a', 'pending', 1, true)).toEqual({ isNew: true, total: 1 });
    expect(await projections.applyTask(triple, 'a', 'running', 2)).toEqual({ prior: 'pending', isNew: false });
    // A redelivered spawn: the row is newer, nothing changes.
    expect(await projections.applyTask(triple, 'a', 'pending', 1, true)).toEqual({ prior: 'running', isNew: false });
    expect(await projections.applyTask(triple, 'a', 'complete', 3)).toEqual({ prior: 'running', isNew: false });
    // A redelivered completion changes nothing either.
    expect(await projections.applyTask(triple, 'a', 'complete', 3)).toEqual({ prior: 'complete', isNew: false });
    // Out of order: the start first (not hinted), then its spawn.
    expect(await projections.applyTask(triple, 'b', 'running', 5)).toEqual({ isNew: true, total: 2 });
    expect(await projections.applyTask(triple, 'b', 'pending', 4, true)).toEqual({ prior: 'running', isNew: false });
    expect(await projections.taskCounts(triple)).toMatchObject({ pending: 0, running: 1, complete: 1 });
    expect(await projections.taskTotal(triple)).toBe(2);
  });

  it("answers the session's total with the count of a task's first sight, so that a spawn needs no read of it", async () => {
    expect((await projections.applyTask(triple, 'a', 'pending', 1, true)).total).toBe(1);
    expect((await projections.applyTask(neighbour, 'x', 'pending', 2, true)).total).toBe(1);
    expect((await projections.applyTask(triple, 'b', 'pending', 3, true)).total).toBe(2);
    // Later events of a counted task, and a redelivered spawn, count nothing and answer no total.
    expect((await projections.applyTask(triple, 'b', 'running', 4)).total).toBeUndefined();
    expect((await projections.applyTask(triple, 'b', 'pending', 3, true)).total).toBeUndefined();
    expect(await projections.taskTotal(triple)).toBe(2);
  });

  it('drops the status index of the task rows that earlier versions made, and still counts by status', async () => {
    const rows = store.collection<{ _id: string }>(SESSION_TASKS_COLLECTION);
    const retired = { tenant: 1, user: 1, session_id: 1, status: 1 } as const;
    await rows.createIndex(retired);
    await projections.ensureIndexes();
    expect(await rows.dropIndex(retired)).toBe(false);
    await projections.applyTask(triple, 'a', 'pending', 1, true);
    await projections.applyTask(triple, 'a', 'running', 2);
    await projections.applyTask(triple, 'b', 'pending', 3, true);
    await projections.applyTask(neighbour, 'c', 'running', 4, true);
    expect(await projections.taskCounts(triple)).toMatchObject({ pending: 1, running: 1 });
  });

  it('sets a total left short by a crash right when the counts are read', async () => {
    await projections.applyTask(triple, 'a', 'pending', 1);
    // A row written by a process that died before counting it.
    await store.collection<Record<string, unknown> & { _id: string }>(SESSION_TASKS_COLLECTION).insertOne({
      _id: JSON.stringify(['t', 'u', 's', 'b']),
      tenant: 't',
      user: 'u',
      session_id: 's',
      task_id: 'b',
      status: 'pending',
      last_sequence: 2,
    });
    expect(await projections.taskTotal(triple)).toBe(1);
    expect(await projections.taskCounts(triple)).toMatchObject({ pending: 2 });
    expect(await projections.taskTotal(triple)).toBe(2);
  });

  it('forgets the total with the rest of an erased session', async () => {
    await projections.applyTask(triple, 'a', 'pending', 1);
    await projections.deleteSession(triple);
    expect(await projections.taskTotal(triple)).toBe(0);
  });
});
