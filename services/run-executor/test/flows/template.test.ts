import { describe, expect, it } from 'vitest';
import { FlowDefinition } from '@ars/contracts';
import { missingInputs, renderTemplate } from '../../src/flows/template.ts';

const scope = {
  input: { topic: 'otters', n: 3, deep: { list: [1, 2] } },
  steps: new Map([
    ['a', { outcome: 'completed' as const, answer: 'A' }],
    ['fan', { outcome: 'failed' as const, answer: 'x\n\ny', answers: ['x', 'y'] }],
  ]),
};

describe('renderTemplate', () => {
  it('inserts input values, non-strings as JSON', () => {
    expect(renderTemplate('{{input.topic}} x{{ input.n }} {{input.deep.list}}', scope)).toBe('otters x3 [1,2]');
  });

  it('inserts answers, a branch answer and outcomes; a step that did not run renders empty', () => {
    expect(
      renderTemplate('[{{steps.a.answer}}|{{steps.fan.answers.1}}|{{steps.fan.outcome}}|{{steps.b.answer}}]', scope),
    ).toBe('[A|y|failed|]');
  });

  it('leaves text without references as it is', () => {
    expect(renderTemplate('#script tool:echo{"a":1};finish:{done}', scope)).toBe(
      '#script tool:echo{"a":1};finish:{done}',
    );
  });
});

describe('missingInputs', () => {
  it('names each input path a template needs and the input lacks', () => {
    const definition = FlowDefinition.parse({
      steps: [
        { id: 'a', type: 'run', query: '{{input.topic}} {{input.deep.missing}}' },
        { id: 'b', type: 'parallel', branches: [{ query: '{{input.other}} {{input.topic}}' }] },
      ],
    });
    expect(missingInputs(definition, scope.input)).toEqual(['input.deep.missing', 'input.other']);
    expect(missingInputs(definition, { topic: 't', deep: { missing: 0 }, other: false })).toEqual([]);
  });
});
