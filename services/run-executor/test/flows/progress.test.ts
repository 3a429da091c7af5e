import { describe, expect, it } from 'vitest';
import { FlowDefinition } from '@ars/contracts';
import {
  branchTarget,
  exceededAxis,
  failureHandled,
  joinChildren,
  stepsWouldExceed,
  targetIndex,
} from '../../src/flows/progress.ts';

const done = (answer: string) => ({ status: 'complete' as const, answer });
const failed = { status: 'failed' as const, error_code: 'llm_error' };

describe('joinChildren', () => {
  it('all: waits for every child, completes with the answers in branch order', () => {
    expect(joinChildren('all', [done('a'), undefined])).toEqual({ kind: 'wait' });
    expect(joinChildren('all', [done('a'), done('b')])).toEqual({
      kind: 'completed',
      answer: 'a\n\nb',
      answers: ['a', 'b'],
      cancel: [],
    });
  });

  it('all: fails with the first failed child once every child ended', () => {
    expect(joinChildren('all', [failed, undefined])).toEqual({ kind: 'wait' });
    expect(joinChildren('all', [done('a'), failed])).toEqual({
      kind: 'failed',
      error_code: 'llm_error',
      answers: ['a', ''],
    });
  });

  it('any: completes with the first completed branch and cancels those still running', () => {
    expect(joinChildren('any', [undefined, done('b'), failed, undefined])).toEqual({
      kind: 'completed',
      answer: 'b',
      answers: ['', 'b', '', ''],
      cancel: [0, 3],
    });
    expect(joinChildren('any', [failed, undefined])).toEqual({ kind: 'wait' });
    expect(joinChildren('any', [failed, { status: 'cancelled' }])).toMatchObject({ kind: 'failed' });
  });
});

describe('branches', () => {
  const steps = FlowDefinition.parse({
    steps: [
      { id: 'a', type: 'run', query: 'q' },
      {
        id: 'br',
        type: 'branch',
        on: 'a',
        cases: [
          { when: { outcome: 'failed' }, goto: 'fix' },
          { when: { outcome: 'completed', answer_matches: '^yes\\b' }, goto: '$end' },
        ],
      },
      { id: 'next', type: 'run', query: 'q' },
      { id: 'fix', type: 'run', query: 'q' },
    ],
  }).steps;

  it('takes the first case that holds, else the default, else the next step', () => {
    expect(branchTarget(steps, 1, { outcome: 'failed' })).toBe('fix');
    expect(branchTarget(steps, 1, { outcome: 'completed', answer: 'yes sir' })).toBe('$end');
    expect(branchTarget(steps, 1, { outcome: 'completed', answer: 'yesterday' })).toBe('next');
    expect(branchTarget(steps, 1, undefined)).toBe('next');
  });

  it('resolves targets to indexes: $end past the last step, $fail to none', () => {
    expect(targetIndex(steps, 'fix')).toBe(3);
    expect(targetIndex(steps, '$end')).toBe(4);
    expect(targetIndex(steps, '$fail')).toBeUndefined();
  });

  it('lets a failed step go on only when a later branch reads it', () => {
    expect(failureHandled(steps, 0)).toBe(true);
    expect(failureHandled(steps, 2)).toBe(false);
  });
});

describe('budgets', () => {
  const usage = { tokens: 100, cost_usd: 0.2, steps: 3, wall_time_ms: 1_000 };

  it('names the first axis crossed: tokens, cost, steps, wall time', () => {
    expect(exceededAxis(undefined, usage)).toBeUndefined();
    expect(exceededAxis({ tokens: 100, cost_usd: 1, steps: 3, wall_time_ms: 1_000 }, usage)).toBeUndefined();
    expect(exceededAxis({ tokens: 99, cost_usd: 0.1 }, usage)).toBe('tokens');
    expect(exceededAxis({ cost_usd: 0.1, wall_time_ms: 10 }, usage)).toBe('cost_usd');
    expect(exceededAxis({ steps: 2, wall_time_ms: 10 }, usage)).toBe('steps');
    expect(exceededAxis({ wall_time_ms: 999 }, usage)).toBe('wall_time_ms');
  });

  it('refuses a spawn that would take the child runs past the steps budget', () => {
    expect(stepsWouldExceed({ steps: 5 }, 3, 2)).toBe(false);
    expect(stepsWouldExceed({ steps: 5 }, 3, 3)).toBe(true);
    expect(stepsWouldExceed({}, 300, 30)).toBe(false);
  });
});
