import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame } from '@ars/contracts';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * Secret-shaped strings in a tool's result or in injected context are
 * redacted where they join the run's messages and reported as
 * `llm.context_leak`, without the secret; the run's checkpoint, read while
 * it waits for an approval, holds what its next prompts carry.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);
const amountOf = (e: EventFrame) => (e.payload.ArgsSummary as { amount?: number } | undefined)?.amount;
const API_KEY = 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWx';

describe('llm.context_leak', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** The run's checkpointed tool and context messages (the scripted reasoning repeats the query), as JSON. */
  async function checkpointed(taskId: string): Promise<string> {
    const runStates = h.store.collection<{ _id: string; messages?: { role: string }[] }>('run_states');
    const state = await runStates.findOne({ _id: taskId });
    return JSON.stringify((state?.messages ?? []).filter((m) => m.role !== 'assistant'));
  }

  it('redacts an API key in a tool result before the next prompt and reports its size', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, {
      query: `#script tool:echo{text:"key ${API_KEY}"};tool:sensitive_action{amount:1};finish:ok`,
    });
    await watch.until((e) => e.type === 'tool.approval_requested');
    const messages = await checkpointed(taskId);
    await h.control('reject', taskId, caller, { reason: 'done' });
    await watch.terminal();
    watch.stop();
    const leaks = ofType(watch.events, 'llm.context_leak');
    expect(leaks.map((e) => e.payload)).toEqual([
      {
        Identity: { ...caller, run: taskId, scopes: undefined },
        Model: expect.any(String),
        LeakSite: 'tool_result',
        SizeBytes: API_KEY.length,
        Threshold: 0,
        OccurredAt: expect.any(String),
      },
    ]);
    expect(messages).not.toContain(API_KEY);
    expect(messages).toContain('key [REDACTED:api_key]');
  });

  it('redacts a bearer token in injected context', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, {
      query: '#script tool:sensitive_action{amount:1};tool:sensitive_action{amount:2};tool:sensitive_action{amount:3}',
    });
    await watch.until((e) => e.type === 'tool.approval_requested');
    const token = 'Bearer abcdefghijklmnopqrstuvwxyz012345';
    await h.control('inject_context', taskId, caller, { header: token });
    await h.control('approve', taskId, caller, { reason: 'ok' });
    // The step after the injection is checkpointed once the next one waits for its approval.
    await watch.until((e) => e.type === 'tool.approval_requested' && amountOf(e) === 2);
    await h.control('approve', taskId, caller, { reason: 'ok' });
    await watch.until((e) => e.type === 'tool.approval_requested' && amountOf(e) === 3);
    const messages = await checkpointed(taskId);
    await h.control('reject', taskId, caller, { reason: 'done' });
    await watch.terminal();
    watch.stop();
    expect(ofType(watch.events, 'llm.context_leak').map((e) => e.payload)).toEqual([
      expect.objectContaining({ LeakSite: 'inject_context', SizeBytes: token.length, Threshold: 0 }),
    ]);
    expect(messages).not.toContain(token);
    expect(messages).toContain('[REDACTED:bearer_token]');
  });

  it('reports nothing for content without secret shapes', async () => {
    const caller = newCaller();
    const { watch } = await h.start(caller, { query: '#script tool:echo{text:"hello 0123456789abcdef"};finish:ok' });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(ofType(watch.events, 'llm.context_leak')).toEqual([]);
  });
});
