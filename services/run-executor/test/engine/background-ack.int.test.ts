import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { newTaskRecord } from '../../src/domain/start.ts';
import { BACKGROUND_KIND } from '../../src/domain/task.ts';
import { enqueueRun } from '../../src/engine/work-queue.ts';
import { newCaller, startEngineHarness, watchRun } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * A background task's completion is acknowledged by the first later run of
 * its session that takes it up in its prompt (`task.background_acknowledged`,
 * the task's `background_acknowledged` latched), once.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);

describe('background acknowledgement', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  async function runBackground(caller: VerifiedIdentity): Promise<{ taskId: string; terminal: EventFrame }> {
    const task = {
      ...newTaskRecord({
        taskId: randomUUID(),
        triple: caller,
        request: { identity: {}, query: '#script finish:report ready' },
        agent: {},
        artifacts: [],
        now: new Date().toISOString(),
      }),
      kind: BACKGROUND_KIND,
    };
    await h.tasks.insertTask(task);
    const watch = await watchRun(h.bus, caller, task.task_id);
    await enqueueRun(h.bus, task);
    const terminal = await watch.terminal();
    watch.stop();
    return { taskId: task.task_id, terminal };
  }

  async function foregroundEvents(caller: VerifiedIdentity): Promise<EventFrame[]> {
    const { watch } = await h.start(caller, { query: '#script finish:ok' });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    return watch.events;
  }

  it('completes a background task with NotifyOnComplete true and leaves it unacknowledged', async () => {
    const caller = newCaller();
    const { taskId, terminal } = await runBackground(caller);
    expect(terminal.payload).toEqual({ TaskID: taskId, NotifyOnComplete: true });
    expect((await h.tasks.getTask(taskId))?.background_acknowledged).toBe(false);
  });

  it('acknowledges the completion in the next run of the session, once', async () => {
    const caller = newCaller();
    const { taskId } = await runBackground(caller);
    const next = await foregroundEvents(caller);
    expect(ofType(next, 'task.background_acknowledged').map((e) => e.payload)).toEqual([{ TaskID: taskId }]);
    expect((await h.tasks.getTask(taskId))?.background_acknowledged).toBe(true);
    const later = await foregroundEvents(caller);
    expect(ofType(later, 'task.background_acknowledged')).toEqual([]);
  });

  it('acknowledges nothing for foreground turns', async () => {
    const caller = newCaller();
    await foregroundEvents(caller);
    expect(ofType(await foregroundEvents(caller), 'task.background_acknowledged')).toEqual([]);
  });
});
