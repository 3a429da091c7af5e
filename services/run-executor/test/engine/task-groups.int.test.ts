import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '@ars/service-kit/testing';
import type { VerifiedIdentity } from '@ars/contracts';
import { TASK_GROUPS_COLLECTION } from '../../src/store/task-group.repository.ts';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness, RunWatch } from './harness.ts';

/**
 * Task groups end to end: a run's `spawn_group` call spawns its children as
 * runs of their own, waits for them, and resolves or cancels the group.
 */

interface GroupArgs {
  readonly tasks: readonly { readonly query: string }[];
  readonly fail_fast?: boolean;
}

/** A parent script: one `spawn_group` call, then a finish. */
const spawning = (args: GroupArgs) => `#script tool:spawn_group${JSON.stringify(args)};finish:parent done`;
const slow = (ms: number, answer: string) => `#script tool:wait{"ms":${ms}};finish:${answer}`;

const ofType = (watch: RunWatch, type: string) => watch.events.filter((e) => e.type === type).map((e) => e.payload);

async function childrenOf(h: EngineHarness, parentId: string) {
  return (await h.tasks.listTasks({ parent_task_id: parentId }, { limit: 100 })).items;
}

describe('task groups', { timeout: 60_000 }, () => {
  let h: EngineHarness;

  beforeAll(async () => {
    // A short drain grace: the restart hands the waiting parent back instead of letting its group resolve first.
    h = await startEngineHarness({ EXECUTOR_DRAIN_GRACE_MS: '200' }, { persistentStore: true });
  });

  afterAll(async () => {
    await h?.stop();
  });

  const run = async (caller: VerifiedIdentity, args: GroupArgs) => h.start(caller, { query: spawning(args) });

  it("resolves a group of three with each child's answer, in order", async () => {
    const caller = newCaller();
    const tasks = [{ query: '#script finish:alpha' }, { query: slow(100, 'beta') }, { query: '#script finish:gamma' }];
    const { taskId, watch } = await run(caller, { tasks });
    expect((await watch.terminal(20_000)).type).toBe('task.completed');
    watch.stop();
    const [created] = ofType(watch, 'task.group_created');
    const groupId = created?.GroupID as string;
    expect(created).toEqual({
      GroupID: groupId,
      OwnerTaskID: taskId,
      RetainTurn: true,
      FailFast: false,
      Description: '',
    });
    const [sealed] = ofType(watch, 'task.group_sealed');
    const members = sealed?.Members as string[];
    expect(sealed).toEqual({ GroupID: groupId, Members: members, SealedAt: expect.any(Number) });
    expect(new Set(members)).toEqual(new Set((await childrenOf(h, taskId)).map((t) => t.task_id)));
    expect(ofType(watch, 'task.group_resolved')).toEqual([
      {
        Completion: {
          GroupID: groupId,
          OwnerTaskID: taskId,
          FailFast: false,
          Members: ['alpha', 'beta', 'gamma'].map((answer, i) => ({
            TaskID: members[i],
            Status: 'complete',
            Answer: answer,
            ErrorCode: '',
          })),
        },
      },
    ]);
    expect(ofType(watch, 'task.group_cancelled')).toEqual([]);

    // The group holds the children's answers: the session's erasure removes it with the tasks.
    const groups = h.store.collection<{ _id: string }>(TASK_GROUPS_COLLECTION);
    expect(await groups.findOne({ _id: groupId })).not.toBeNull();
    const triple = { tenant: caller.tenant, user: caller.user, session: caller.session };
    await h.service.call('_tasks.erase_session', triple, caller);
    expect(await groups.findOne({ _id: groupId })).toBeNull();
  });

  it('cancels the siblings of a failed child in a fail-fast group with task.group_cancelled', async () => {
    const caller = newCaller();
    const tasks = [{ query: slow(30_000, 'never') }, { query: '#script tool:not a tool' }];
    const { taskId, watch } = await run(caller, { tasks, fail_fast: true });
    const cancelled = await watch.until((e) => e.type === 'task.group_cancelled', 20_000);
    const members = ofType(watch, 'task.group_sealed')[0]?.Members as string[];
    expect(cancelled.payload).toMatchObject({ Origin: 'fail_fast' });
    const completion = cancelled.payload.Completion as { Members: { TaskID: string; Status: string }[] };
    expect(completion.Members.map((m) => [m.TaskID, m.Status])).toEqual([
      [members[0], 'cancelled'],
      [members[1], 'failed'],
    ]);
    await watch.terminal(20_000);
    watch.stop();
    expect(ofType(watch, 'task.group_resolved')).toEqual([]);
    const sibling = await h.watch(caller, members[0] as string);
    expect((await sibling.terminal()).payload).toMatchObject({ TaskID: members[0], Cascaded: true });
    sibling.stop();
    expect((await childrenOf(h, taskId)).map((t) => t.status).sort()).toEqual(['cancelled', 'failed']);
  });

  it('cancels the group when its parent is cancelled', async () => {
    const caller = newCaller();
    const tasks = [{ query: slow(30_000, 'a') }, { query: slow(30_000, 'b') }];
    const { taskId, watch } = await run(caller, { tasks });
    await watch.until((e) => e.type === 'task.group_sealed', 20_000);
    await h.control('cancel', taskId, caller);
    expect((await watch.terminal(20_000)).type).toBe('task.cancelled');
    watch.stop();
    expect(ofType(watch, 'task.group_cancelled').map((p) => p.Origin)).toEqual(['parent_cancelled']);
    for (const child of await childrenOf(h, taskId)) {
      const w = await h.watch(caller, child.task_id);
      expect((await w.terminal(20_000)).type).toBe('task.cancelled');
      w.stop();
    }
  });

  it('a parent taken again mid-group spawns no child twice and resolves', async () => {
    const caller = newCaller();
    const tasks = [{ query: slow(2_000, 'one') }, { query: slow(2_000, 'two') }, { query: slow(2_000, 'three') }];
    const { taskId, watch } = await run(caller, { tasks });
    await watch.until((e) => e.type === 'task.group_sealed', 20_000);
    await h.restart();
    expect((await watch.terminal(30_000)).type).toBe('task.completed');
    watch.stop();
    // The harness's repository is on the first executor's store, closed by the restart: the stream tells.
    const session = await storedEvents(h.bus, { tenant: caller.tenant, user: caller.user, session: caller.session });
    const spawned = session.filter((e) => e.type === 'task.spawned' && e.payload.ParentTaskID === taskId);
    expect(spawned).toHaveLength(3);
    const stored = session.filter((e) => e.run === taskId);
    const count = (type: string) => stored.filter((e) => e.type === type).length;
    // The call was made on each claim: the second found its group where the first left it.
    expect(count('tool.invoked')).toBe(2);
    expect([count('task.group_created'), count('task.group_sealed'), count('task.group_resolved')]).toEqual([1, 1, 1]);
    const resolved = stored.find((e) => e.type === 'task.group_resolved')?.payload.Completion as {
      Members: { Answer: string }[];
    };
    expect(resolved.Members.map((m) => m.Answer)).toEqual(['one', 'two', 'three']);
  });
});
