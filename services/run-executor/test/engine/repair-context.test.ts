import { describe, expect, it } from 'vitest';
import {
  compressTrajectory,
  contextWindowOf,
  COMPRESSED_HEADER,
  promptTokens,
} from '../../src/engine/context-window.ts';
import { countRepair, dropExtraFields, repairTier, resetRepair } from '../../src/engine/repair.ts';
import type { ChatMessage } from '../../src/providers/provider.ts';
import { parseTextDecision } from '../../src/providers/text-decision.ts';

const step = (n: number, result: string): ChatMessage[] => [
  { role: 'assistant', content: '', tool_call: { id: `call_${n}`, name: 'echo', args: { n } } },
  { role: 'tool', tool_call_id: `call_${n}`, content: result },
];

describe('repair rules', () => {
  it('counts consecutive invalid calls, escalates the tier, and starts again after a valid call', () => {
    const two = countRepair(countRepair(undefined, 'a'), 'b');
    expect(two).toEqual({ consecutive: 2, total: 2, reasons: ['a', 'b'] });
    expect([repairTier(1), repairTier(2)]).toEqual(['error', 'schema']);
    expect(resetRepair(two)).toEqual({ consecutive: 0, total: 2, reasons: [] });
  });

  it('drops only members a closed schema does not declare', () => {
    const closed = { type: 'object', properties: { ms: {} }, additionalProperties: false };
    expect(dropExtraFields({ ms: 1, z: 2, a: 3 }, closed)).toEqual({ args: { ms: 1 }, dropped: ['a', 'z'] });
    expect(dropExtraFields({ ms: 1, z: 2 }, { type: 'object', properties: { ms: {} } }).dropped).toEqual([]);
  });
});

describe('context window', () => {
  it('takes the override, else the longest known prefix, else 128000', () => {
    expect([contextWindowOf('gpt-4o-mini', 0), contextWindowOf('gpt-4', 0), contextWindowOf('llama', 0)]).toEqual([
      128_000, 8_192, 128_000,
    ]);
    expect(contextWindowOf('gpt-4o', 1000)).toBe(1000);
  });

  it('summarises the oldest uncited steps first and keeps the last step whole', () => {
    const long = 'x'.repeat(2_000);
    const trajectory = [...step(1, long), ...step(2, long), ...step(3, long)];
    const budget = promptTokens('', trajectory, []) - 300;
    const out = compressTrajectory(trajectory, (m) => promptTokens('', m, []) <= budget);
    expect(out).toMatchObject({ stepsBefore: 3, stepsAfter: 2 });
    expect(out?.messages[0]?.content.startsWith(COMPRESSED_HEADER)).toBe(true);
    expect(out?.messages.at(-1)).toEqual(trajectory.at(-1));
  });

  it('keeps a result a later step cites, and fails when nothing else can go', () => {
    const cited = 'the order id is 4711-ABCD-9999 and more';
    const trajectory: ChatMessage[] = [
      ...step(1, cited),
      { role: 'assistant', content: '', tool_call: { id: 'call_2', name: 'echo', args: { q: cited } } },
      { role: 'tool', tool_call_id: 'call_2', content: 'ok' },
    ];
    expect(compressTrajectory(trajectory, () => false)).toBeUndefined();
  });
});

describe('text decisions', () => {
  it('reads a tool call from the first JSON object of an answer, and an answer otherwise', () => {
    expect(parseTextDecision('Sure: {"tool": "echo", "arguments": {"text": "}"}} ok', 'c1')).toMatchObject({
      kind: 'tool_call',
      tool: 'echo',
      args: { text: '}' },
    });
    expect(parseTextDecision('{"answer": "hi"}', 'c1')).toEqual({ kind: 'finish', answer: 'hi' });
    expect(parseTextDecision('plain words', 'c1')).toEqual({ kind: 'finish', answer: 'plain words' });
  });
});
