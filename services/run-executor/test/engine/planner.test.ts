import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { contextEntry } from '../../src/domain/task.ts';
import {
  argsSummary,
  checkToolCall,
  historyMessages,
  inputMessages,
  lastToolOf,
  promptMessages,
  stepLimitReached,
  systemPrompt,
  toolCallMessage,
  toolResultMessage,
  MAX_TOOL_OUTPUT_CHARS,
} from '../../src/engine/planner.ts';
import type { ToolDefinition } from '../../src/tools/tool.ts';

const tool = (name: string, args: z.ZodType<Record<string, unknown>> = z.looseObject({})): ToolDefinition => ({
  name,
  description: name,
  transport: 'builtin',
  sideEffect: 'read_only',
  retry: { maxAttempts: 1, backoffMs: 0 },
  approval: { mode: 'never', on_timeout: 'reject' },
  tags: [],
  args,
  run: async () => '',
});

describe('planner', () => {
  it('puts the current goal after the agent layers in the system prompt', () => {
    expect(systemPrompt('Be brief.', 'book a train')).toBe('Be brief.\n\nGoal: book a train');
    expect(systemPrompt('', 'x')).toBe('Goal: x');
  });

  it("turns the session's earlier turns into user/assistant pairs, leaving out the run itself", () => {
    const turns = [
      { task_id: 'a', query: 'q1', answer: 'a1', at: '' },
      { task_id: 'self', query: 'q2', answer: 'a2', at: '' },
    ];
    expect(historyMessages(turns, 'self')).toEqual([
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1' },
    ]);
  });

  it('turns injected context into a system message and a user message into a user message', () => {
    expect(
      inputMessages([
        { kind: 'inject_context', payload: { city: 'Paris' }, event_id: '1', at: '' },
        { kind: 'user_message', payload: { message: 'hurry' }, event_id: '2', at: '' },
      ]),
    ).toEqual([
      { role: 'system', content: 'Operator context: {"city":"Paris"}' },
      { role: 'user', content: 'hurry' },
    ]);
  });

  it('reads a stored entry from its JSON text, every member kept, and an entry of the earlier shape alike', () => {
    const injected = JSON.parse('{"__proto__":{"a":1},"$where":"1","a.b":2,"":3}') as Record<string, unknown>;
    const entries = [
      contextEntry('inject_context', injected, '1'),
      contextEntry('user_message', { message: 'hurry' }, '2'),
      { kind: 'inject_context' as const, payload: { city: 'Paris' }, event_id: '3' },
    ].map((entry) => ({ ...entry, at: '' }));
    expect(inputMessages(entries)).toEqual([
      { role: 'system', content: 'Operator context: {"__proto__":{"a":1},"$where":"1","a.b":2,"":3}' },
      { role: 'user', content: 'hurry' },
      { role: 'system', content: 'Operator context: {"city":"Paris"}' },
    ]);
  });

  it('orders a prompt as history, query, trajectory', () => {
    const history = [{ role: 'user' as const, content: 'h' }];
    const trajectory = [{ role: 'tool' as const, content: 't' }];
    expect(promptMessages(history, 'q', trajectory).map((m) => m.content)).toEqual(['h', 'q', 't']);
  });

  it('checks a call: unknown tool, non-object arguments, schema failures', () => {
    const exposed = new Map([['wait', tool('wait', z.strictObject({ ms: z.int() }))]]);
    const call = (name: string, args: Record<string, unknown> | undefined) =>
      checkToolCall({ kind: 'tool_call', callId: 'c', tool: name, args, rawArgs: '' }, exposed);
    expect(call('nope', {})).toEqual({ ok: false, error: 'unknown tool: nope' });
    expect(call('wait', undefined)).toEqual({ ok: false, error: 'arguments are not a JSON object' });
    expect(call('wait', { ms: 'x' })).toMatchObject({ ok: false, error: expect.stringMatching(/^ms: /) });
    expect(call('wait', { ms: 5 })).toMatchObject({ ok: true, args: { ms: 5 } });
  });

  it('records a decision and its result as assistant and tool messages', () => {
    const message = toolCallMessage(
      { kind: 'tool_call', callId: 'c1', tool: 'echo', args: { a: 1 }, rawArgs: '' },
      'why',
    );
    expect(message).toEqual({
      role: 'assistant',
      content: 'why',
      tool_call: { id: 'c1', name: 'echo', args: { a: 1 } },
    });
    expect(toolResultMessage('c1', { ok: false, error: 'boom' })).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'error: boom',
    });
    const long = toolResultMessage('c1', { ok: true, output: 'x'.repeat(MAX_TOOL_OUTPUT_CHARS + 10) });
    expect(long.content.length).toBe(MAX_TOOL_OUTPUT_CHARS + 1);
    expect(lastToolOf([message, long])).toBe('echo');
  });

  it('bounds an arguments summary', () => {
    const summary = argsSummary({ text: 'y'.repeat(500), deep: { a: { b: { c: { d: 1 } } } } }) as Record<
      string,
      unknown
    >;
    expect(String(summary.text).length).toBe(201);
    expect(summary.deep).toEqual({ a: { b: '…' } });
  });

  it('reaches the step limit after maxSteps completed steps', () => {
    expect(stepLimitReached(4, 5)).toBe(false);
    expect(stepLimitReached(5, 5)).toBe(true);
  });
});
