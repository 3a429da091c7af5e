import { describe, expect, it } from 'vitest';
import type { EventFrame } from '@ars/client';
import { buildTimeline, streamedArguments } from '../src/timeline.ts';

let sequence = 0;
const frame = (type: string, payload: Record<string, unknown>): EventFrame =>
  ({ type, payload, sequence: ++sequence, run: 'r1' }) as unknown as EventFrame;
const chunk = (Kind: string, Delta: string, Done = false) => frame('llm.completion.chunk', { Kind, Delta, Done });

describe('the run timeline', () => {
  it('keeps reasoning and text apart, and gives a tool call its streamed arguments and its outcome', () => {
    const entries = buildTimeline([
      chunk('reasoning', 'I should '),
      chunk('reasoning', 'echo'),
      chunk('tool_call', 'echo {"te'),
      chunk('tool_call', 'xt":"hi"}', true),
      frame('tool.invoked', { ToolName: 'echo', Transport: 'builtin' }),
      frame('llm.cost.recorded', { Model: 'm' }),
      frame('tool.completed', { ToolName: 'echo', Transport: 'builtin', Attempts: 1, DurationMS: 3 }),
      chunk('text', 'All '),
      chunk('text', 'good', true),
    ]);
    expect(entries.map((e) => e.kind)).toEqual(['llm', 'tool', 'event', 'llm']);
    expect(entries[0]).toMatchObject({ stream: 'reasoning', text: 'I should echo' });
    expect(entries[1]).toMatchObject({
      tool: 'echo',
      transport: 'builtin',
      args: '{"text":"hi"}',
      outcome: { state: 'completed', attempts: 1, durationMs: 3 },
    });
    expect(entries[1]?.kind === 'tool' && entries[1].frames.map((f) => f.type)).toEqual([
      'tool.invoked',
      'tool.completed',
    ]);
    expect(entries[3]).toMatchObject({ stream: 'text', text: 'All good', done: true });
  });

  it('shows a failed attempt, then the exhausted policy, on the same call', () => {
    const entries = buildTimeline([
      frame('tool.invoked', { ToolName: 'fetch', Transport: 'mcp_http' }),
      frame('tool.failed', { ToolName: 'fetch', Attempts: 1, ErrorClass: 'transient', ErrorMessage: 'reset' }),
      frame('tool.policy_exhausted', { ToolName: 'fetch', Attempts: 3, LastClass: 'transient', LastError: 'reset' }),
    ]);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      kind: 'tool',
      outcome: { state: 'exhausted', attempts: 3, error: 'transient reset' },
    });
  });

  it('makes arguments refused before the call ran an entry of their own', () => {
    const entries = buildTimeline([
      chunk('tool_call', '{"ms":"soon"}'),
      frame('tool.invalid_args', { ToolName: 'wait', Transport: 'builtin', ValidationError: 'ms: expected number' }),
    ]);
    expect(entries).toEqual([
      expect.objectContaining({
        kind: 'tool',
        tool: 'wait',
        args: '{"ms":"soon"}',
        outcome: { state: 'invalid_args', error: 'ms: expected number' },
      }),
    ]);
  });

  it('reads the arguments of a text-mode model that names the tool first', () => {
    expect(streamedArguments('echo', ' echo {"a":1} ')).toBe('{"a":1}');
    expect(streamedArguments('echo', '{"a":1}')).toBe('{"a":1}');
  });
});
