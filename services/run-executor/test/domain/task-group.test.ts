import { describe, expect, it } from 'vitest';
import { decideGroup, groupCompletion, groupIdOf, memberSpawnKey, settleGroup } from '../../src/domain/task-group.ts';

describe('task group rules', () => {
  it('keys a group by its run and planner step, and each member by its index', () => {
    expect(groupIdOf('t1', 1)).toBe(groupIdOf('t1', 1));
    expect(groupIdOf('t1', 1)).not.toBe(groupIdOf('t1', 2));
    expect(memberSpawnKey(groupIdOf('t1', 1), 0)).not.toBe(memberSpawnKey(groupIdOf('t1', 1), 1));
  });

  it('waits until every member ended, then resolves', () => {
    expect(decideGroup(false, [{ status: 'complete' }, undefined])).toBeUndefined();
    expect(decideGroup(false, [{ status: 'complete' }, { status: 'failed' }])).toBe('resolved');
  });

  it('decides fail-fast as soon as one member failed or was cancelled', () => {
    expect(decideGroup(true, [undefined, { status: 'failed' }])).toBe('fail_fast');
    expect(decideGroup(true, [undefined, { status: 'cancelled' }])).toBe('fail_fast');
    expect(decideGroup(true, [undefined, { status: 'complete' }])).toBeUndefined();
  });

  it('fills the completion from recorded outcomes, else from the row status, with empty strings for none', () => {
    const group = { group_id: 'g', owner_task_id: 't1', fail_fast: true };
    const completion = groupCompletion(group, [
      { taskId: 'a', status: 'complete', outcome: { status: 'complete', answer: 'yes' } },
      { taskId: 'b', status: 'running' },
    ]);
    expect(completion).toEqual({
      GroupID: 'g',
      OwnerTaskID: 't1',
      FailFast: true,
      Members: [
        { TaskID: 'a', Status: 'complete', Answer: 'yes', ErrorCode: '' },
        { TaskID: 'b', Status: 'running', Answer: '', ErrorCode: '' },
      ],
    });
  });

  describe('settling a group nobody waits on', () => {
    const base = { failFast: false, resolution: undefined, ownerCancelled: false };

    it('decides nothing while a member runs', () => {
      expect(settleGroup({ ...base, outcomes: [{ status: 'complete' }, undefined] })).toEqual({
        resolution: undefined,
        cancelLive: false,
        publish: false,
      });
    });

    it('resolves and publishes once every member ended', () => {
      const settled = settleGroup({ ...base, outcomes: [{ status: 'complete' }, { status: 'failed' }] });
      expect(settled).toEqual({ resolution: { kind: 'resolved' }, cancelLive: false, publish: true });
    });

    it('cancels a fail-fast group at its first failure and publishes only once the rest ended', () => {
      const first = settleGroup({ ...base, failFast: true, outcomes: [{ status: 'failed' }, undefined] });
      expect(first).toEqual({
        resolution: { kind: 'cancelled', origin: 'fail_fast' },
        cancelLive: true,
        publish: false,
      });
      const last = settleGroup({
        ...base,
        failFast: true,
        resolution: first.resolution,
        outcomes: [{ status: 'failed' }, { status: 'cancelled' }],
      });
      expect(last).toEqual({ ...first, publish: true });
    });

    it('keeps the recorded resolution', () => {
      const resolution = { kind: 'cancelled', origin: 'parent_cancelled' } as const;
      const settled = settleGroup({ ...base, resolution, outcomes: [{ status: 'complete' }] });
      expect(settled.resolution).toBe(resolution);
    });

    it('cancels the group parent_cancelled once a member ended cancelled under a cancelled owner', () => {
      const outcomes = [{ status: 'cancelled' as const }, undefined];
      expect(settleGroup({ ...base, ownerCancelled: true, outcomes }).resolution).toEqual({
        kind: 'cancelled',
        origin: 'parent_cancelled',
      });
      expect(settleGroup({ ...base, outcomes }).resolution).toBeUndefined();
    });
  });
});
