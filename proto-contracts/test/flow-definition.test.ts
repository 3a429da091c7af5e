import { describe, expect, it } from 'vitest';
import { FlowDefinition, flowTemplateReferences } from '../src/index.ts';

const run = (id: string, query = '#script finish:ok') => ({ id, type: 'run', query });

const problems = (definition: unknown) => {
  const parsed = FlowDefinition.safeParse(definition);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('FlowDefinition', () => {
  it('accepts a sequence, a fan-out and a branch, defaulting a join to all', () => {
    const parsed = FlowDefinition.parse({
      budget: { tokens: 1000, cost_usd: 0.5, steps: 5, wall_time_ms: 60_000 },
      steps: [
        run('a', 'about {{input.topic}}'),
        { id: 'fan', type: 'parallel', branches: [{ query: '{{steps.a.answer}}' }, { query: 'x', agent_id: 'w' }] },
        { id: 'pick', type: 'branch', on: 'fan', cases: [{ when: { answer_matches: '^ok' }, goto: '$end' }] },
        run('last', '{{steps.fan.answers.1}} {{steps.a.outcome}}'),
      ],
    });
    expect(parsed.steps[1]).toMatchObject({ join: 'all' });
  });

  it('refuses an unknown step type and an unknown member', () => {
    expect(problems({ steps: [{ id: 'a', type: 'teleport' }] })).not.toEqual([]);
    expect(problems({ steps: [{ ...run('a'), retries: 3 }] })).not.toEqual([]);
  });

  it('refuses a step id used twice', () => {
    expect(problems({ steps: [run('a'), run('a')] })).toEqual(['steps.1.id: step id a is used twice']);
  });

  it('refuses a template naming a later or unknown step, or an unknown reference', () => {
    expect(problems({ steps: [run('a', '{{steps.b.answer}}'), run('b')] })).toEqual([
      'steps.0.query: {{steps.b.answer}} names no earlier step',
    ]);
    expect(problems({ steps: [run('a', '{{ env.HOME }}')] })).toEqual([
      'steps.0.query: {{ env.HOME }} is not a template reference',
    ]);
  });

  it('refuses a branch jumping backwards, reading a later step, or with a bad pattern', () => {
    const branch = (on: string, goto: string, answer_matches?: string) => ({
      id: 'br',
      type: 'branch',
      on,
      cases: [{ when: answer_matches === undefined ? { outcome: 'failed' } : { answer_matches }, goto }],
    });
    expect(problems({ steps: [run('a'), branch('a', 'a')] })).toEqual(['steps.1.cases.0.goto: a is not a later step']);
    expect(problems({ steps: [run('a'), branch('z', '$end')] })).toEqual([
      'steps.1.on: z is not an earlier run or parallel step',
    ]);
    expect(problems({ steps: [run('a'), branch('a', '$fail', '(')] })[0]).toMatch(
      /^steps\.1\.cases\.0\.when\.answer_matches/,
    );
  });

  it('refuses a condition naming nothing and a non-positive budget', () => {
    const empty = { id: 'br', type: 'branch', on: 'a', cases: [{ when: {}, goto: '$end' }] };
    expect(problems({ steps: [run('a'), empty] })).toHaveLength(1);
    expect(problems({ budget: { steps: 0 }, steps: [run('a')] })).toHaveLength(1);
  });
});

describe('flowTemplateReferences', () => {
  it('reads input paths, step members and invalid references, in order', () => {
    expect(flowTemplateReferences('{{input.a.b}} {{ steps.s1.answers.2 }} {{steps.s1.outcome}} {{nope}}')).toEqual([
      { kind: 'input', path: ['a', 'b'], text: '{{input.a.b}}' },
      { kind: 'step', step: 's1', member: 'answers', index: 2, text: '{{ steps.s1.answers.2 }}' },
      { kind: 'step', step: 's1', member: 'outcome', text: '{{steps.s1.outcome}}' },
      { kind: 'invalid', text: '{{nope}}' },
    ]);
  });
});
