import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChunkKind, CompletionRequest } from '../../src/providers/provider.ts';
import { createScriptedProvider, promptDigest } from '../../src/providers/scripted.ts';

function request(query: string, overrides: Partial<CompletionRequest> = {}) {
  const chunks: [string, ChunkKind][] = [];
  const req: CompletionRequest = {
    taskId: 't',
    step: 0,
    query,
    goal: query,
    system: 'sys',
    messages: [{ role: 'user', content: query }],
    tools: [],
    params: {},
    signal: new AbortController().signal,
    onChunk: (delta, kind) => chunks.push([delta, kind]),
    ...overrides,
  };
  return { req, chunks };
}

describe('scripted provider', () => {
  it('echoes the query in a few text chunks and finishes when there is no script', async () => {
    const { req, chunks } = request('hello there, agent');
    const result = await createScriptedProvider().complete(req);
    expect(result.decision).toEqual({ kind: 'finish', answer: 'hello there, agent' });
    expect(chunks.map(([d]) => d).join('')).toBe('hello there, agent');
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every(([, k]) => k === 'text')).toBe(true);
  });

  it('plays the step of the planner step index', async () => {
    const { req } = request('#script tool:echo{a:1};finish:done', { step: 1 });
    expect((await createScriptedProvider().complete(req)).decision).toEqual({ kind: 'finish', answer: 'done' });
  });

  it('decides a tool call with a deterministic call id', async () => {
    const { req, chunks } = request('#script tool:echo{a:1}');
    const result = await createScriptedProvider().complete(req);
    expect(result.decision).toEqual({
      kind: 'tool_call',
      callId: 'call_1',
      tool: 'echo',
      args: { a: 1 },
      rawArgs: '{"a":1}',
    });
    expect(chunks.map(([, k]) => k)).toEqual(['reasoning', 'tool_call']);
    expect(result.usage.input_tokens).toBeGreaterThan(0);
  });

  it('prefers the configuration script over the query', async () => {
    const { req } = request('#script tool:echo{}');
    const result = await createScriptedProvider([{ finish: 'from config' }]).complete(req);
    expect(result.decision).toEqual({ kind: 'finish', answer: 'from config' });
  });

  it('stops a long stream when aborted', async () => {
    const controller = new AbortController();
    const { req, chunks } = request('#script stream:1000/5;finish', { signal: controller.signal });
    const pending = createScriptedProvider().complete(req);
    setTimeout(() => controller.abort(), 30);
    await expect(pending).rejects.toThrow();
    expect(chunks.length).toBeLessThan(1000);
  });

  it('digests the goal and the messages new since its last decision', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'q0' },
      { role: 'assistant', content: 'a0' },
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '', tool_call: { id: 'c', name: 'echo', args: {} } },
      { role: 'tool', content: 'out', tool_call_id: 'c' },
      { role: 'system', content: 'Operator context: {}' },
    ];
    expect(promptDigest({ goal: 'g', query: 'q', messages })).toBe(
      'goal: g\nhistory: 1 turns\ntool: out\ncontext: Operator context: {}',
    );
  });
});
