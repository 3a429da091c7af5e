import { describe, expect, it } from 'vitest';
import { decideGroup, groupCompletion, groupIdOf, memberSpawnKey } from '../../src/domain/task-group.ts';

describe('task group rules', () => {
  it('keeps the group id and spawn keys of a call the same across a redelivery', () => {
    expect(groupIdOf('t1', 'call_1')).toBe(groupIdOf('t1', 'call_1'));
    expect(memberSpawnKey(groupIdOf('t1', 'call_1'), 0)).not.toBe(memberSpawnKey(groupIdOf('t1', 'call_1'), 1));
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
});
