import { describe, expect, it } from 'vitest';
import { parseDirective, ScriptError, scriptFromRecords, stepAt } from '../../src/providers/script.ts';

describe('scripted directives', () => {
  it('is not a script without the #script prefix', () => {
    expect(parseDirective('what is the weather?')).toBeUndefined();
  });

  it('parses tool calls with JSON or bare-key arguments, and finish', () => {
    expect(parseDirective('#script tool:echo{"text":"a;b"};tool:wait{ms:50};finish:all done')).toEqual({
      loop: false,
      steps: [
        { action: { kind: 'tool', tool: 'echo', args: { text: 'a;b' } }, chunks: 0, delayMs: 0, costUsd: 0 },
        { action: { kind: 'tool', tool: 'wait', args: { ms: 50 } }, chunks: 0, delayMs: 0, costUsd: 0 },
        { action: { kind: 'finish', answer: 'all done' }, chunks: 0, delayMs: 0, costUsd: 0 },
      ],
    });
  });

  it('applies stream:<count>/<ms> to the next step only', () => {
    const script = parseDirective('#script stream:20/5;tool:echo;finish');
    expect(script?.steps.map((s) => [s.chunks, s.delayMs])).toEqual([
      [20, 5],
      [0, 0],
    ]);
    expect(script?.steps[1]?.action).toEqual({ kind: 'finish', answer: undefined });
  });

  it('repeats from the first step with loop', () => {
    const script = parseDirective('#script tool:echo{};loop');
    expect(script?.loop).toBe(true);
    expect(stepAt(script!, 7)?.action).toMatchObject({ kind: 'tool', tool: 'echo' });
  });

  it('has no step past the end of a script without loop', () => {
    expect(stepAt(parseDirective('#script finish:x')!, 1)).toBeUndefined();
  });

  it('reports each later step at the cost set by cost:<usd>, and parses inspect', () => {
    const script = parseDirective('#script tool:echo;cost:0.25;tool:echo;inspect');
    expect(script?.steps.map((s) => [s.action.kind, s.costUsd])).toEqual([
      ['tool', 0],
      ['tool', 0.25],
      ['inspect', 0.25],
    ]);
    expect(scriptFromRecords([{ inspect: true, cost_usd: 2 }]).steps).toEqual([
      { action: { kind: 'inspect' }, chunks: 0, delayMs: 0, costUsd: 2 },
    ]);
  });

  it.each([
    '#script jump:far',
    '#script cost:lots',
    '#script tool:echo{oops',
    '#script tool:echo[1]',
    '#script stream:many',
  ])('refuses the malformed directive %s', (query) => {
    expect(() => parseDirective(query)).toThrow(ScriptError);
  });

  it('builds a script from configuration records', () => {
    const script = scriptFromRecords([
      { stream: { count: 3, delay_ms: 1 } },
      { tool: 'echo', args: { a: 1 } },
      { finish: 'bye', chunks: 2 },
      { loop: true },
    ]);
    expect(script).toEqual({
      loop: true,
      steps: [
        { action: { kind: 'tool', tool: 'echo', args: { a: 1 } }, chunks: 3, delayMs: 1, costUsd: 0 },
        { action: { kind: 'finish', answer: 'bye' }, chunks: 2, delayMs: 0, costUsd: 0 },
      ],
    });
  });
});
