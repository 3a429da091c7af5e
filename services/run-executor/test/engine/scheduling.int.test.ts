import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTaskRecord } from '../../src/domain/start.ts';
import { enqueueRun } from '../../src/engine/work-queue.ts';
import { createLeaseManager } from '../../src/engine/lease.ts';
import { createLeaseRepository } from '../../src/store/lease.repository.ts';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness } from './harness.ts';

describe('scheduling', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness({ EXECUTOR_CONCURRENCY: '1' });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('runs higher-priority runs first', async () => {
    const caller = newCaller();
    const blocker = await h.start(caller, { query: '#script tool:wait{ms:400};finish:ok' });
    await blocker.watch.until((e) => e.type === 'tool.invoked');
    const low = await h.start(caller, { query: 'low', priority: -3 });
    const normal = await h.start(caller, { query: 'normal' });
    const high = await h.start(caller, { query: 'high', priority: 9 });
    const started = async (w: typeof low) => (await w.watch.until((e) => e.type === 'task.started', 10_000)).sequence;
    const [lowSeq, normalSeq, highSeq] = await Promise.all([started(low), started(normal), started(high)]);
    expect(highSeq).toBeLessThan(normalSeq);
    expect(normalSeq).toBeLessThan(lowSeq);
    for (const w of [blocker, low, normal, high]) {
      await w.watch.terminal();
      w.watch.stop();
    }
  });

  it('offers a run again later while another live executor holds its lease', async () => {
    const other = createLeaseManager(createLeaseRepository(h.store), {
      owner: 'another-executor',
      ttlMs: 1_500,
      onLost: () => {},
    });
    const caller = newCaller();
    const taskId = randomUUID();
    await h.tasks.insertTask(
      newTaskRecord({
        taskId,
        triple: caller,
        request: { identity: {}, query: 'held elsewhere' },
        agent: {},
        artifacts: [],
        now: new Date().toISOString(),
      }),
    );
    expect((await other.acquire(taskId)).ok).toBe(true);
    const watch = await h.watch(caller, taskId);
    const queuedAt = Date.now();
    await enqueueRun(h.bus, { task_id: taskId, priority: 0 });
    await watch.until((e) => e.type === 'task.started', 10_000);
    // Not before the other executor's lease ran out (it never refreshed it).
    expect(Date.now() - queuedAt).toBeGreaterThan(1_000);
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
  });
});
