import { describe, expect, it } from 'vitest';
import {
  recordId,
  recordSeq,
  taskStateRecord,
  toStateRecordView,
  transitionOf,
  turnRecord,
} from '../src/domain/state-records.ts';

const input = {
  triple: { tenant: 't', user: 'u', session: 's' },
  streamSequence: 41,
  occurredAt: '2025-01-02T03:04:05.678Z',
  taskId: 'task-1',
};

describe('transitionOf', () => {
  it('reads the status each recorded task event moves to', () => {
    const cases = [
      ['task.spawned', 'pending'],
      ['task.started', 'running'],
      ['task.completed', 'complete'],
      ['task.failed', 'failed'],
      ['task.cancelled', 'cancelled'],
      ['task.paused', 'paused'],
      ['task.resumed', 'running'],
    ] as const;
    for (const [type, status] of cases) expect(transitionOf(type, { TaskID: 'x' })?.status).toBe(status);
  });

  it('takes the prior status of task.started from PriorState', () => {
    expect(transitionOf('task.started', { TaskID: 'x', PriorState: 'paused' })?.priorStatus).toBe('paused');
    expect(transitionOf('task.started', { TaskID: 'x', PriorState: 'bogus' })?.priorStatus).toBeUndefined();
  });

  it('makes a turn of a top-level spawn only', () => {
    expect(transitionOf('task.spawned', { TaskID: 'x', ParentTaskID: '' })?.isTurn).toBe(true);
    expect(transitionOf('task.spawned', { TaskID: 'x', ParentTaskID: 'p' })?.isTurn).toBe(false);
    expect(transitionOf('task.started', { TaskID: 'x' })?.isTurn).toBe(false);
  });

  it('ignores task events that are not transitions and malformed ones', () => {
    expect(transitionOf('task.prioritised', { TaskID: 'x' })).toBeUndefined();
    expect(transitionOf('task.completed', {})).toBeUndefined();
    expect(transitionOf('task.completed', { TaskID: '' })).toBeUndefined();
  });
});

describe('state record positions', () => {
  it('orders the turn before the task state of the same event, both before the next event', () => {
    expect(recordSeq(41, 'turn')).toBeLessThan(recordSeq(41, 'task_state'));
    expect(recordSeq(41, 'task_state')).toBeLessThan(recordSeq(42, 'turn'));
  });

  it('keys a record by its source event, so redelivery cannot insert it twice', () => {
    expect(taskStateRecord(input, 'pending')._id).toBe(recordId(41, 'task_state'));
    expect(turnRecord(input, 'q')._id).toBe(recordId(41, 'turn'));
    expect(recordId(41, 'turn')).not.toBe(recordId(41, 'task_state'));
  });

  it('shows the wire record without the owner triple', () => {
    const view = toStateRecordView(taskStateRecord(input, 'running', 'pending'));
    expect(view).toEqual({
      seq: 83,
      event_sequence: 41,
      kind: 'task_state',
      task_id: 'task-1',
      status: 'running',
      prior_status: 'pending',
      occurred_at: input.occurredAt,
    });
  });

  it('keeps a turn without content when the query could not be read', () => {
    expect(toStateRecordView(turnRecord(input, undefined))).not.toHaveProperty('content');
  });
});
