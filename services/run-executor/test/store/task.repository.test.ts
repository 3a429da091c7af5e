import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
import type { Store } from '@ars/store';
import { newTaskRecord } from '../../src/domain/start.ts';
import { createTaskRepository } from '../../src/store/task.repository.ts';
import type { TaskRepository } from '../../src/store/task.repository.ts';

function record(taskId: string, key?: string) {
  return newTaskRecord({
    taskId,
    triple: { tenant: 't', user: 'u', session: 's' },
    request: { identity: {}, query: 'q', ...(key === undefined ? {} : { idempotency_key: key }) },
    agent: {},
    artifacts: [],
    now: new Date().toISOString(),
  });
}

describe('task repository (embedded, in memory)', () => {
  let store: Store;
  let tasks: TaskRepository;

  beforeEach(async () => {
    store = await openStore({ dataDir: '.', database: 'tasks_test', inMemory: true });
    tasks = await createTaskRepository(store);
  });

  afterEach(async () => {
    await store.close();
  });

  it('keeps tasks without a key apart and reuses a taken idempotency scope', async () => {
    await expect(tasks.insertTask(record('a'))).resolves.toMatchObject({ reused: false });
    await expect(tasks.insertTask(record('b'))).resolves.toMatchObject({ reused: false });
    await expect(tasks.insertTask(record('c', 'k'))).resolves.toMatchObject({ reused: false });
    await expect(tasks.insertTask(record('d', 'k'))).resolves.toMatchObject({ reused: true, task: { task_id: 'c' } });
  });

  it('commits a new task inside the turn: its caller answers a start waiting on it', async () => {
    await tasks.insertTask(record('warm'));
    let immediateRan = false;
    setImmediate(() => (immediateRan = true));
    await expect(tasks.insertTask(record('a'))).resolves.toMatchObject({ reused: false });
    expect(immediateRan).toBe(false);
    await expect(tasks.getTask('a')).resolves.toMatchObject({ task_id: 'a', status: 'pending' });
  });

  it('moves pending to running once and reports the prior status', async () => {
    await tasks.insertTask(record('a'));
    await expect(tasks.markRunning('a')).resolves.toBe('pending');
    const started = (await tasks.getTask('a'))?.started_at;
    await expect(tasks.markRunning('a')).resolves.toBe('running');
    expect((await tasks.getTask('a'))?.started_at).toBe(started);
  });

  it('lets exactly one of concurrent terminal moves win, then refuses every change', async () => {
    await tasks.insertTask(record('a'));
    const outcomes = await Promise.all([
      tasks.markTerminal('a', 'complete'),
      tasks.markTerminal('a', 'failed', { code: 'x' }),
      tasks.markTerminal('a', 'cancelled'),
    ]);
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    await expect(tasks.markRunning('a')).resolves.toBeNull();
    await expect(tasks.setGoal('a', 'g')).resolves.toBe(false);
    await expect(tasks.setPriority('a', 3)).resolves.toBeNull();
    expect((await tasks.getTask('a'))?.ended_at).toBeDefined();
  });

  it('returns the prior priority and rewrites the goal of a live task', async () => {
    await tasks.insertTask(record('a'));
    await expect(tasks.setPriority('a', 5)).resolves.toBe(0);
    await expect(tasks.setGoal('a', 'new goal')).resolves.toBe(true);
    expect(await tasks.getTask('a')).toMatchObject({ priority: 5, goal: 'new goal', query: 'q' });
  });

  it('records each step once and sums its cost', async () => {
    await tasks.insertTask(record('a'));
    await tasks.recordStep('a', { index: 1, cost_usd: 0.5, tokens_in: 1, tokens_out: 1 });
    await tasks.recordStep('a', { index: 1, cost_usd: 0.5, tokens_in: 1, tokens_out: 1 });
    await tasks.recordStep('a', { index: 2, cost_usd: 0.25, tokens_in: 1, tokens_out: 1 });
    const task = await tasks.getTask('a');
    expect(task?.steps.map((s) => s.index)).toEqual([1, 2]);
    expect(task?.cost_usd).toBe(0.75);
  });

  it('appends context once per event id', async () => {
    await tasks.insertTask(record('a'));
    const entry = { kind: 'user_message' as const, payload: { message: 'hi' }, event_id: 'e1' };
    await expect(tasks.appendContext('a', entry)).resolves.toBe(true);
    await expect(tasks.appendContext('a', entry)).resolves.toBe(false);
    expect((await tasks.getTask('a'))?.context).toHaveLength(1);
  });

  it('erases the tasks of one session only', async () => {
    await tasks.insertTask(record('a'));
    await tasks.insertTask({ ...record('b'), session: 'other' });
    await expect(tasks.eraseSession({ tenant: 't', user: 'u', session: 's' })).resolves.toBe(1);
    await expect(tasks.eraseSession({ tenant: 't', user: 'u', session: 's' })).resolves.toBe(0);
    expect(await tasks.getTask('b')).not.toBeNull();
  });

  it('lists the live children of a run and none of the top-level tasks', async () => {
    await tasks.insertTask(record('parent'));
    await tasks.insertTask({ ...record('child-1'), parent_task_id: 'parent' });
    await tasks.insertTask({ ...record('child-2'), parent_task_id: 'parent' });
    await tasks.insertTask(record('other'));
    await tasks.markTerminal('child-2', 'complete');
    const page = await tasks.listTasks(
      { parent_task_id: 'parent', status: { $nin: ['complete', 'failed', 'cancelled'] } },
      { limit: 10 },
    );
    expect(page.items.map((t) => t.task_id)).toEqual(['child-1']);
  });
});
