import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
import { newTaskRecord } from '../../src/domain/start.ts';
import { createTaskRepository } from '../../src/store/task.repository.ts';

function record(taskId: string) {
  return newTaskRecord({
    taskId,
    triple: { tenant: 't', user: 'u', session: 's' },
    request: { identity: {}, query: 'q' },
    agent: {},
    artifacts: [],
    now: new Date().toISOString(),
  });
}

describe('task repository (embedded, on disk)', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ars-tasks-'));
  });

  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps the compound list indexes on the sqlite engine, which lists from them', async () => {
    const store = await openStore({ dataDir, database: 'run-executor', engine: 'sqlite' });
    try {
      const tasks = await createTaskRepository(store);
      await Promise.all(['a', 'b', 'c'].map((id) => tasks.insertTask(record(id))));
      const page = await tasks.listTasks({ tenant: 't', user: 'u', session: 's' }, { limit: 2 });
      expect(page.items).toHaveLength(2);
      expect(await store.collection('tasks').dropIndex({ tenant: 1, created_at: -1 })).toBe(true);
      expect(await store.collection('tasks').dropIndex({ tenant: 1, user: 1, session: 1, created_at: -1 })).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('drops the compound list indexes an earlier version left in a nedb datafile', async () => {
    const earlier = await openStore({ dataDir, database: 'run-executor', engine: 'nedb' });
    await earlier.collection('tasks').createIndex({ tenant: 1, user: 1, session: 1, created_at: -1 });
    await earlier.collection('tasks').createIndex({ tenant: 1, created_at: -1 });
    await earlier.close();
    const store = await openStore({ dataDir, database: 'run-executor', engine: 'nedb' });
    try {
      const tasks = await createTaskRepository(store);
      await tasks.insertTask(record('a'));
      expect(await store.collection('tasks').dropIndex({ tenant: 1, created_at: -1 })).toBe(false);
      expect(await store.collection('tasks').dropIndex({ tenant: 1, user: 1, session: 1, created_at: -1 })).toBe(false);
      expect((await tasks.listTasks({ tenant: 't', user: 'u', session: 's' }, { limit: 10 })).items).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
