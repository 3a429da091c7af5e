import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventPublisher } from '@ars/bus';
import type { VerifiedIdentity } from '@ars/contracts';
import { createLogger } from '@ars/telemetry';
import { newTaskRecord } from '../../src/domain/start.ts';
import type { TaskRecord } from '../../src/domain/task.ts';
import { publishSpawned } from '../../src/engine/announce.ts';
import { enqueueRun } from '../../src/engine/work-queue.ts';
import { newCaller, startEngineHarness, watchRun } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * A start sends `task.spawned` and the RUNS message together; where the
 * first failed (or its sequence is not yet on the task) the claim publishes
 * it, deduplicated by its event id, before `task.started`.
 */
describe('announcing a run', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  async function insertTask(caller: VerifiedIdentity): Promise<TaskRecord> {
    const task = newTaskRecord({
      taskId: randomUUID(),
      triple: caller,
      request: { identity: {}, query: '#script finish:done' },
      agent: {},
      artifacts: [],
      now: new Date().toISOString(),
    });
    await h.tasks.insertTask(task);
    return task;
  }

  async function runQueuedOnly(caller: VerifiedIdentity, task: TaskRecord) {
    const watch = await watchRun(h.bus, caller, task.task_id);
    await enqueueRun(h.bus, task, { msgId: task.task_id });
    const terminal = await watch.terminal();
    watch.stop();
    return { terminal, events: watch.events };
  }

  it('publishes task.spawned at the claim, before task.started, when the start could not', async () => {
    const caller = newCaller();
    const task = await insertTask(caller);
    const { terminal, events } = await runQueuedOnly(caller, task);
    expect(terminal.type).toBe('task.completed');
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(['task.spawned', 'task.started']);
    expect(events.filter((e) => e.type === 'task.spawned')).toHaveLength(1);
    expect(events[0]!.sequence).toBeLessThan(events[1]!.sequence);
    expect((await h.tasks.getTask(task.task_id))?.spawned_sequence).toBe(events[0]!.sequence);
  });

  it('publishes no second task.spawned when the start stored it but did not record its sequence', async () => {
    const caller = newCaller();
    const task = await insertTask(caller);
    const publisher = createEventPublisher(h.bus, {
      source: 'run-executor',
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
    const sequence = await publishSpawned({ bus: h.bus, publisher, tasks: h.tasks }, task);
    const { terminal, events } = await runQueuedOnly(caller, task);
    expect(terminal.type).toBe('task.completed');
    const spawned = events.filter((e) => e.type === 'task.spawned');
    expect(spawned.map((e) => e.sequence)).toEqual([sequence]);
    expect(events[1]?.type).toBe('task.started');
    expect((await h.tasks.getTask(task.task_id))?.spawned_sequence).toBe(sequence);
  });

  it('answers a start with task.spawned and the run queued, in that order on the stream', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: '#script finish:done' });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(watch.events.slice(0, 2).map((e) => e.type)).toEqual(['task.spawned', 'task.started']);
    expect(watch.events.filter((e) => e.type === 'task.spawned')).toHaveLength(1);
    expect((await h.tasks.getTask(taskId))?.spawned_sequence).toBe(watch.events[0]!.sequence);
  });
});
