import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '@ars/service-kit/testing';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { newCaller, startEngineHarness, TERMINAL_TYPES } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * A group that does not retain the turn (`retain_turn: false`): the owner's
 * `spawn_group` call returns once the group is sealed and its turn goes on
 * and ends; the members are background tasks; the last member to end
 * settles the group (`task.group_resolved`, or `task.group_cancelled` with
 * its origin), and a later run of the session acknowledges each member's
 * completion.
 */

interface GroupArgs {
  readonly tasks: readonly { readonly query: string }[];
  readonly fail_fast?: boolean;
}

const background = (args: GroupArgs, then = 'finish:parent done') =>
  `#script tool:spawn_group${JSON.stringify({ ...args, retain_turn: false })};${then}`;
const slow = (ms: number, answer: string) => `#script tool:wait{"ms":${ms}};finish:${answer}`;

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);
const terminalOf = (events: readonly EventFrame[], run: string) =>
  events.find((e) => e.run === run && TERMINAL_TYPES.includes(e.type));

describe('task groups that do not retain the turn', { timeout: 60_000 }, () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  const sessionEvents = (caller: VerifiedIdentity) =>
    storedEvents(h.bus, { tenant: caller.tenant, user: caller.user, session: caller.session });

  it('ends the owner before its members and resolves the group once they ended', async () => {
    const caller = newCaller();
    const tasks = [{ query: slow(1_000, 'one') }, { query: slow(1_500, 'two') }];
    const { taskId, watch } = await h.start(caller, { query: background({ tasks }) });
    expect((await watch.terminal(20_000)).type).toBe('task.completed');
    const resolved = await watch.until((e) => e.type === 'task.group_resolved', 20_000);
    watch.stop();
    const events = await sessionEvents(caller);
    const created = ofType(events, 'task.group_created');
    expect(created.map((e) => e.payload)).toEqual([
      { GroupID: expect.any(String), OwnerTaskID: taskId, RetainTurn: false, FailFast: false, Description: '' },
    ]);
    const members = ofType(events, 'task.group_sealed')[0]?.payload.Members as string[];
    expect(members).toHaveLength(2);
    // The members are background tasks, and the owner's turn ended before either of them did.
    const spawned = ofType(events, 'task.spawned').filter((e) => e.payload.ParentTaskID === taskId);
    expect(spawned.map((e) => e.payload.Kind)).toEqual(['background', 'background']);
    const ownerEnd = terminalOf(events, taskId)?.sequence ?? Infinity;
    for (const member of members) {
      const end = terminalOf(events, member);
      expect(end?.payload).toEqual({ TaskID: member, NotifyOnComplete: true });
      expect(end?.sequence ?? -1).toBeGreaterThan(ownerEnd);
    }
    expect(resolved.payload).toEqual({
      Completion: {
        GroupID: created[0]?.payload.GroupID,
        OwnerTaskID: taskId,
        FailFast: false,
        Members: members.map((id, i) => ({ TaskID: id, Status: 'complete', Answer: ['one', 'two'][i], ErrorCode: '' })),
      },
    });
    // The owner's call answered at once, with the group and its members.
    expect(ofType(events, 'tool.completed').filter((e) => e.run === taskId)).toHaveLength(1);
    expect(ofType(events, 'task.group_resolved')).toHaveLength(1);
    expect(ofType(events, 'task.group_cancelled')).toEqual([]);
  });

  it("acknowledges each member's completion in the session's next run", async () => {
    const caller = newCaller();
    // Ending apart: two runs of one session ending at the same moment can lose one's turn (the session turns are
    // appended read-modify-write).
    const tasks = [{ query: '#script finish:alpha' }, { query: slow(500, 'beta') }];
    const first = await h.start(caller, { query: background({ tasks }) });
    await first.watch.until((e) => e.type === 'task.group_resolved', 20_000);
    first.watch.stop();
    const members = ofType(first.watch.events, 'task.group_sealed')[0]?.payload.Members as string[];
    const next = await h.start(caller, { query: '#script finish:ok' });
    expect((await next.watch.terminal()).type).toBe('task.completed');
    next.watch.stop();
    const acknowledged = ofType(next.watch.events, 'task.background_acknowledged').map((e) => e.payload.TaskID);
    expect(acknowledged.sort()).toEqual([...members].sort());
    for (const member of members) expect((await h.tasks.getTask(member))?.background_acknowledged).toBe(true);
  });

  it('cancels the rest of a fail-fast group when one member fails, without its owner', async () => {
    const caller = newCaller();
    const tasks = [{ query: slow(30_000, 'never') }, { query: '#script tool:not a tool' }];
    const { taskId, watch } = await h.start(caller, { query: background({ tasks, fail_fast: true }) });
    const cancelled = await watch.until((e) => e.type === 'task.group_cancelled', 20_000);
    watch.stop();
    const members = ofType(watch.events, 'task.group_sealed')[0]?.payload.Members as string[];
    expect(cancelled.payload).toMatchObject({ Origin: 'fail_fast' });
    const completion = cancelled.payload.Completion as { Members: { TaskID: string; Status: string }[] };
    expect(completion.Members.map((m) => [m.TaskID, m.Status])).toEqual([
      [members[0], 'cancelled'],
      [members[1], 'failed'],
    ]);
    const events = await sessionEvents(caller);
    expect(terminalOf(events, taskId)?.type).toBe('task.completed');
    expect(ofType(events, 'task.group_resolved')).toEqual([]);
    expect(ofType(events, 'task.group_cancelled')).toHaveLength(1);
  });

  it('cancels the group parent_cancelled when its owner is cancelled while its members run', async () => {
    const caller = newCaller();
    const tasks = [{ query: slow(30_000, 'a') }, { query: slow(30_000, 'b') }];
    const { taskId, watch } = await h.start(caller, { query: background({ tasks }, 'tool:wait{"ms":30000};finish:x') });
    await watch.until((e) => e.type === 'tool.invoked' && e.payload.ToolName === 'wait', 20_000);
    // Hard: a soft cancel would wait for the owner's own 30 s call to end.
    await h.control('cancel', taskId, caller, { hard: true });
    expect((await watch.terminal(20_000)).type).toBe('task.cancelled');
    const cancelled = await watch.until((e) => e.type === 'task.group_cancelled', 20_000);
    watch.stop();
    expect(cancelled.payload.Origin).toBe('parent_cancelled');
    const statuses = (cancelled.payload.Completion as { Members: { Status: string }[] }).Members.map((m) => m.Status);
    expect(statuses).toEqual(['cancelled', 'cancelled']);
    expect(ofType(await sessionEvents(caller), 'task.group_resolved')).toEqual([]);
  });
});
