import { describe, expect, it } from 'vitest';
import { Task } from '@ars/contracts';
import { ABBREVIATED_CHARS, abbreviateTask, jsonBytes, replyBudgetBytes } from '../../src/domain/reply-size.ts';
import { newTaskRecord } from '../../src/domain/start.ts';
import { toTaskView } from '../../src/domain/task.ts';
import { pageViews } from '../../src/handlers/reply-budget.ts';

const view = (query: string, goal = query): Task => ({
  ...toTaskView(
    newTaskRecord({
      taskId: 'task-1',
      triple: { tenant: 't', user: 'u', session: 's' },
      request: { identity: {}, query },
      agent: {},
      artifacts: [],
      now: '2030-01-01T00:00:00.000Z',
    }),
  ),
  goal,
});

describe('replyBudgetBytes', () => {
  it("is three quarters of the bus's max_payload, 1 MiB when the server does not say", () => {
    expect(replyBudgetBytes(1_048_576)).toBe(786_432);
    expect(replyBudgetBytes(undefined)).toBe(786_432);
    expect(replyBudgetBytes(65_536)).toBe(49_152);
  });
});

describe('jsonBytes', () => {
  it('counts the UTF-8 bytes of the JSON, escapes included', () => {
    expect(jsonBytes({ a: 'é' })).toBe(10);
    expect(jsonBytes('\u0001')).toBe(8);
  });
});

describe('abbreviateTask', () => {
  it('cuts query and goal to their first ABBREVIATED_CHARS characters and names both', () => {
    const task = abbreviateTask(view('q'.repeat(ABBREVIATED_CHARS + 1), 'g'.repeat(ABBREVIATED_CHARS * 2)));
    expect(task).toMatchObject({
      query: 'q'.repeat(ABBREVIATED_CHARS),
      goal: 'g'.repeat(ABBREVIATED_CHARS),
      abbreviated: ['query', 'goal'],
    });
    expect(Task.safeParse(task).success).toBe(true);
  });

  it('counts code points and never splits a surrogate pair', () => {
    const task = abbreviateTask(view('😀'.repeat(ABBREVIATED_CHARS + 1), 'short goal'));
    expect(task.query).toBe('😀'.repeat(ABBREVIATED_CHARS));
    expect(task.goal).toBe('short goal');
    expect(task.abbreviated).toEqual(['query']);
  });

  it('leaves a task with nothing to cut as it is, without the member', () => {
    const whole = view('😀'.repeat(ABBREVIATED_CHARS));
    expect(abbreviateTask(whole)).toBe(whole);
  });
});

describe('pageViews with abbreviateTask', () => {
  const fitted = (task: Task, maxBytes: number) => {
    const row = { task };
    return pageViews((r: typeof row) => r.task, { maxBytes, shorten: abbreviateTask }).view(row);
  };

  it('keeps a task whose JSON fits the budget whole, however long its query', () => {
    const whole = view('q'.repeat(20_000));
    expect(fitted(whole, jsonBytes(whole))).toBe(whole);
  });

  it('abbreviates a task whose JSON alone exceeds the budget', () => {
    const large = view('q'.repeat(20_000));
    expect(fitted(large, jsonBytes(large) - 1)).toMatchObject({ abbreviated: ['query', 'goal'] });
  });

  it('sizes each row once by its view as the reply carries it, plus the comma between items', () => {
    const large = view('q'.repeat(20_000));
    const row = { task: large };
    const views = pageViews((r: typeof row) => r.task, { maxBytes: 1_000, shorten: abbreviateTask });
    const { sizeOf } = views.budget(10_000);
    expect(sizeOf(row)).toBe(jsonBytes(views.view(row)) + 1);
    expect(views.view(row)).toBe(views.view(row));
  });
});
