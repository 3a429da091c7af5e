import { describe, expect, it } from 'vitest';
import { Task } from '@ars/contracts';
import { newTaskRecord } from '../../src/domain/start.ts';
import { isTerminal, toTaskView } from '../../src/domain/task.ts';

describe('toTaskView', () => {
  const record = {
    ...newTaskRecord({
      taskId: 'task-1',
      triple: { tenant: 't', user: 'u', session: 's' },
      request: { identity: {}, query: 'q', idempotency_key: 'k' },
      agent: {},
      artifacts: [],
      now: '2030-01-01T00:00:00.000Z',
    }),
    spawned_sequence: 7,
  };

  it('is a valid wire Task', () => {
    expect(Task.safeParse(toTaskView(record)).success).toBe(true);
  });

  it('leaves the internal members out', () => {
    const view = toTaskView(record);
    for (const internal of [
      '_id',
      'idempotency_scope',
      'steps',
      'cost_usd',
      'context',
      'spawned_sequence',
      'agent_revision_id',
    ]) {
      expect(view).not.toHaveProperty(internal);
    }
    expect(view).toHaveProperty('idempotency_key', 'k');
  });
});

describe('isTerminal', () => {
  it.each([
    ['pending', false],
    ['running', false],
    ['paused', false],
    ['complete', true],
    ['failed', true],
    ['cancelled', true],
  ] as const)('%s → %s', (status, terminal) => {
    expect(isTerminal(status)).toBe(terminal);
  });
});
