import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
import { newTaskRecord } from '../../src/domain/start.ts';
import { createTaskRepository } from '../../src/store/task.repository.ts';
import type { TaskRepository } from '../../src/store/task.repository.ts';

const SCOPE = { tenant: 't', user: 'u', session: 's' };
/** The read bounds these tests run with: small, so that crossing them takes few tasks. */
const COUNT_LIMIT = 40;
const PAGE_SCAN_LIMIT = 25;

function record(taskId: string, query = 'q') {
  return newTaskRecord({
    taskId,
    triple: { tenant: 't', user: 'u', session: 's' },
    request: { identity: {}, query },
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

  /** `use` on a task repository over a sqlite store in the test's directory, holding `count` pending tasks of scope. */
  async function withTasks(
    count: number,
    use: (tasks: TaskRepository, ids: readonly string[]) => Promise<void>,
  ): Promise<void> {
    const store = await openStore({ dataDir, database: 'run-executor', engine: 'sqlite' });
    try {
      const tasks = await createTaskRepository(store, { countLimit: COUNT_LIMIT, pageScanLimit: PAGE_SCAN_LIMIT });
      const ids = Array.from({ length: count }, (_, i) => `task-${String(i).padStart(6, '0')}`);
      await Promise.all(ids.map((id) => tasks.insertTask(record(id))));
      await use(tasks, ids);
    } finally {
      await store.close();
    }
  }

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

  it('counts every status exactly up to COUNT_LIMIT tasks, and says when it stopped there', async () => {
    await withTasks(COUNT_LIMIT, async (tasks, ids) => {
      for (const id of ids.slice(0, 3)) await tasks.markRunning(id);
      await tasks.markTerminal(ids[0] as string, 'failed', { code: 'llm_error' });
      expect(await tasks.countByStatus(SCOPE)).toEqual({
        counts: { pending: COUNT_LIMIT - 3, running: 2, paused: 0, complete: 0, failed: 1, cancelled: 0 },
        complete: true,
      });
      // One more than the limit: what was counted is a lower bound of each status.
      await tasks.insertTask(record('task-extra'));
      const capped = await tasks.countByStatus(SCOPE);
      expect(capped.complete).toBe(false);
      expect(Object.values(capped.counts).reduce((a, b) => a + b, 0)).toBe(COUNT_LIMIT);
      expect(capped.counts.pending).toBeGreaterThanOrEqual(COUNT_LIMIT - 3);
      // A filter narrowing the scope counts among its newest COUNT_LIMIT tasks only.
      const text = { $or: [{ query: { $regex: 'q' } }] };
      expect((await tasks.countByStatus({ ...SCOPE, ...text }, SCOPE)).complete).toBe(false);
      // A narrower filter under the limit is exact again.
      expect(await tasks.countByStatus({ ...SCOPE, _id: { $in: ids.slice(0, 3) } })).toEqual({
        counts: { pending: 0, running: 2, paused: 0, complete: 0, failed: 1, cancelled: 0 },
        complete: true,
      });
    });
  });

  it('reads at most PAGE_SCAN_LIMIT tasks of the scope for a narrowed page, and the cursors still find every match', async () => {
    await withTasks(PAGE_SCAN_LIMIT + 500, async (tasks, ids) => {
      // The one match is the oldest task (the smallest id of the earliest time): last in the list's order.
      const oldest = record('a-needle', 'find the needle');
      await tasks.insertTask({ ...oldest, created_at: '2020-01-01T00:00:00.000Z' });
      const needle = { ...SCOPE, $or: [{ query: { $regex: 'needle' } }] };
      const first = await tasks.listTasks(needle, { limit: 10, scope: SCOPE });
      expect(first.items).toEqual([]);
      expect(first.next_cursor).not.toBeNull();
      // Each page reads one window of the scope; the last one holds the match.
      const found: string[] = [];
      let pages = 1;
      for (let cursor = first.next_cursor ?? undefined; cursor !== undefined; pages++) {
        const page = await tasks.listTasks(needle, { limit: 10, scope: SCOPE, cursor });
        found.push(...page.items.map((task) => task.task_id));
        cursor = page.next_cursor ?? undefined;
      }
      expect(found).toEqual(['a-needle']);
      expect(pages).toBe(Math.ceil((ids.length + 1) / PAGE_SCAN_LIMIT));
      // Without a scope the page reads as far as it needs.
      expect((await tasks.listTasks(needle, { limit: 10 })).items.map((task) => task.task_id)).toEqual(['a-needle']);
      // Every page of the scope itself, each read from its cursor on.
      const all: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await tasks.listTasks(SCOPE, { limit: 1000, cursor });
        all.push(...page.items.map((task) => task.task_id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
      expect(all).toHaveLength(ids.length + 1);
      expect(new Set(all).size).toBe(all.length);
      expect(all.at(-1)).toBe('a-needle');
    });
  });
});
