import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { decodeStoredEvent, encodeToken, eventFilterSubject, readEvents } from '@ars/bus';
import { cachedClientCount, createOpenAiProvider, MAX_CACHED_CLIENTS } from '../../src/providers/openai.ts';
import type { LlmProvider } from '../../src/providers/provider.ts';
import { FAKE_OPENAI_BEHAVIOURS, startFakeOpenAi } from '@ars/testkit';
import type { FakeOpenAi, FakeOpenAiBehaviour } from '@ars/testkit';
import { newCaller, startEngineHarness, TERMINAL_TYPES } from './harness.ts';
import type { EngineHarness, RunWatch } from './harness.ts';

/**
 * The `openai` provider against a fake OpenAI-compatible server
 * (`startFakeOpenAi` of @ars/testkit): a good stream, and the ways a stream goes wrong
 * (stalls, cut-short or garbage bodies, HTTP errors), cancelled or drained.
 * `LLM_TIMEOUT_MS` is its minimum, 1 s, so a stalled stream ends quickly.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);
const terminals = (events: readonly EventFrame[]) => events.filter((e) => TERMINAL_TYPES.includes(e.type));

/** An agent configuration whose provider is the fake server's `behaviour`; its id is the behaviour's. */
function agentOf(fake: FakeOpenAi, behaviour: FakeOpenAiBehaviour, providerName = 'local'): Record<string, unknown> {
  return {
    prompt_layers: [{ name: 'base', text: 'Be brief.' }],
    llm_provider: {
      provider_name: providerName,
      provider: 'openai',
      base_url: fake.url(behaviour),
      model: 'test-model',
      api_key: 'k',
    },
  };
}

/** The run's events the EVENTS stream holds now, in order. */
async function storedTypes(h: EngineHarness, caller: VerifiedIdentity, taskId: string): Promise<string[]> {
  const reader = await readEvents(h.bus, { filterSubject: eventFilterSubject(caller) });
  const types: string[] = [];
  try {
    for await (const record of reader) {
      if (record.runToken === encodeToken(taskId)) types.push(decodeStoredEvent(record.data).type);
    }
  } finally {
    await reader.close();
  }
  return types;
}

describe('openai provider', () => {
  let h: EngineHarness;
  let fake: FakeOpenAi;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    h = await startEngineHarness({ LLM_TIMEOUT_MS: '1000' });
    for (const behaviour of Object.values(FAKE_OPENAI_BEHAVIOURS))
      h.agentConfigs.set(behaviour, agentOf(fake, behaviour));
  });

  afterAll(async () => {
    await h?.stop();
    await fake?.stop();
  });

  /** Starts a run of agent `agentId` (a behaviour's agent is named after it). */
  async function start(
    agentId: string,
    query = 'say hello',
  ): Promise<{ taskId: string; watch: RunWatch; caller: VerifiedIdentity }> {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query, agent_id: agentId });
    return { taskId, watch, caller };
  }

  /** Runs agent `agentId` to the end. */
  async function run(agentId: string, query?: string) {
    const { taskId, watch } = await start(agentId, query);
    const terminal = await watch.terminal();
    watch.stop();
    return { taskId, terminal, events: watch.events };
  }

  it('streams a tool call and an answer from an OpenAI-compatible server', async () => {
    const before = fake.requests.length;
    const { taskId, terminal, events } = await run(FAKE_OPENAI_BEHAVIOURS.toolThenAnswer);
    expect(terminal.type).toBe('task.completed');
    expect(ofType(events, 'planner.decision').map((e) => [e.payload.DecisionKind, e.payload.Tool])).toEqual([
      ['ToolCall', 'echo'],
      ['Finish', ''],
    ]);
    expect(ofType(events, 'planner.decision')[0]?.payload.ReasoningTrace).toBe('Let me echo. ');
    expect(ofType(events, 'tool.completed')[0]?.payload).toMatchObject({ ToolName: 'echo' });
    const deltas = ofType(events, 'llm.completion.chunk').map((c) => [c.payload.Kind, c.payload.Delta]);
    expect(deltas).toContainEqual(['tool_call', '{"text":']);
    expect(deltas).toContainEqual(['text', 'said hello.']);
    expect(ofType(events, 'llm.cost.recorded')[1]?.payload).toMatchObject({
      Model: 'test-model',
      Usage: { input_tokens: 42, output_tokens: 7 },
    });

    const requests = fake.requests.slice(before);
    expect(requests).toHaveLength(2);
    const [first, second] = requests.map((r) => r.body) as {
      model: string;
      stream: boolean;
      tools: unknown[];
      messages: Record<string, unknown>[];
    }[];
    expect(first).toMatchObject({ model: 'test-model', stream: true });
    expect(first?.tools).toContainEqual(
      expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'echo' }) }),
    );
    expect(first?.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('Be brief.') });
    expect(first?.messages[0]?.content).toContain('Goal: say hello');
    expect(second?.messages.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: 'Let me echo. ',
        tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'echo', arguments: '{"text":"hello"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_x', content: '{"text":"hello"}' },
    ]);
    expect(await h.tasks.getTask(taskId)).toMatchObject({ status: 'complete' });
  });

  it('ends a run hard-cancelled during a stream as cancelled, not completed with the partial answer', async () => {
    const { taskId, watch, caller } = await start(FAKE_OPENAI_BEHAVIOURS.stall);
    await watch.until((e) => e.type === 'llm.completion.chunk');
    const request = fake.requests.at(-1);
    await h.control('cancel', taskId, caller, { hard: true });
    const terminal = await watch.terminal();
    watch.stop();
    expect(terminal.type).toBe('task.cancelled');
    // The stream was stopped, not left open; nothing of the call (its decision, a tool) follows the control.
    await request?.closed;
    expect(await h.tasks.getTask(taskId)).toMatchObject({ status: 'cancelled' });
    expect(await storedTypes(h, caller, taskId)).toEqual([
      'task.spawned',
      'task.started',
      'llm.completion.chunk',
      'control.received',
      'control.applied',
      // A hard cancel reports the controls it dropped (none here) before the terminal event.
      'runtime.run_cancelled',
      'task.cancelled',
    ]);
  });

  it('fails a run whose stream stalls on keep-alive comments longer than LLM_TIMEOUT_MS with llm_error', async () => {
    const { taskId, watch } = await start(FAKE_OPENAI_BEHAVIOURS.stall);
    await watch.until((e) => e.type === 'llm.completion.chunk');
    const request = fake.requests.at(-1);
    const terminal = await watch.terminal();
    watch.stop();
    expect(terminal.payload).toEqual({ TaskID: taskId, ErrorCode: 'llm_error' });
    expect(ofType(watch.events, 'planner.decision')).toEqual([]);
    await request?.closed;
  });

  it('ends a run soft-cancelled during a stalled stream as cancelled once the stream times out', async () => {
    const { taskId, watch, caller } = await start(FAKE_OPENAI_BEHAVIOURS.stall);
    await watch.until((e) => e.type === 'llm.completion.chunk');
    await h.control('cancel', taskId, caller);
    await watch.until((e) => e.type === 'control.applied');
    await watch.terminal();
    watch.stop();
    // The step the cancel waits for fails (no failover is left); the run still ends as its caller asked.
    expect(terminals(watch.events).map((e) => e.type)).toEqual(['task.cancelled']);
    expect(await h.tasks.getTask(taskId)).toMatchObject({ status: 'cancelled' });
  });

  it.each([
    ['answers HTTP 200 with an HTML page', FAKE_OPENAI_BEHAVIOURS.html],
    ['ends its stream without a finish_reason (the partial answer is not one)', FAKE_OPENAI_BEHAVIOURS.truncated],
    ['answers an HTTP error, no failover being left', FAKE_OPENAI_BEHAVIOURS.serverError],
    ['sends a data: line that is not JSON', FAKE_OPENAI_BEHAVIOURS.malformed],
    [
      'withholds the answer (finish_reason content_filter; what came before is not one)',
      FAKE_OPENAI_BEHAVIOURS.contentFilter,
    ],
  ])('fails a run whose provider %s with llm_error, deciding nothing', async (_, behaviour) => {
    const { taskId, terminal, events } = await run(behaviour);
    expect(terminal.payload).toEqual({ TaskID: taskId, ErrorCode: 'llm_error' });
    expect(ofType(events, 'planner.decision')).toEqual([]);
    expect(await h.tasks.getTask(taskId)).toMatchObject({ status: 'failed', error_code: 'llm_error' });
  });

  it('completes a run whose answer reached max_tokens (finish_reason length) instead of failing it', async () => {
    const { taskId, terminal, events } = await run(FAKE_OPENAI_BEHAVIOURS.maxTokens);
    expect(terminal.type).toBe('task.completed');
    expect(ofType(events, 'planner.decision').map((e) => e.payload.DecisionKind)).toHaveLength(1);
    expect(await h.tasks.getTask(taskId)).toMatchObject({ status: 'complete' });
  });

  describe('the provider alone', () => {
    /** One call of `provider`; `onChunk` sees each piece. */
    function callOnce(provider: LlmProvider, signal: AbortSignal, onChunk: (delta: string) => void) {
      return provider.complete({
        taskId: 't',
        step: 0,
        query: 'go on',
        goal: 'go on',
        system: '',
        messages: [{ role: 'user', content: 'go on' }],
        tools: [],
        params: {},
        signal,
        onChunk,
      });
    }

    /** One call of the provider on `behaviour`; `onChunk` sees each piece. */
    function complete(
      behaviour: FakeOpenAiBehaviour,
      settings: { timeoutMs: number; streamMaxMs?: number },
      signal: AbortSignal,
      onChunk: (delta: string) => void,
    ) {
      const provider = createOpenAiProvider({
        baseUrl: fake.url(behaviour),
        apiKey: 'k',
        model: 'test-model',
        ...settings,
      });
      return callOnce(provider, signal, onChunk);
    }

    it('throws when its signal aborts mid-stream, instead of returning the partial answer', async () => {
      const abort = new AbortController();
      const call = complete(FAKE_OPENAI_BEHAVIOURS.stall, { timeoutMs: 60_000 }, abort.signal, () => abort.abort());
      await expect(call).rejects.toMatchObject({ name: 'AbortError' });
      await fake.requests.at(-1)?.closed;
    });

    it('writes nothing to the console when a stream is malformed: the error it throws is what gets logged', async () => {
      const spies = (['error', 'warn', 'log', 'info', 'debug'] as const).map((name) =>
        vi.spyOn(console, name).mockImplementation(() => undefined),
      );
      try {
        const call = complete(
          FAKE_OPENAI_BEHAVIOURS.malformed,
          { timeoutMs: 5_000 },
          new AbortController().signal,
          () => {},
        );
        await expect(call).rejects.toBeInstanceOf(Error);
        for (const spy of spies) expect(spy).not.toHaveBeenCalled();
      } finally {
        for (const spy of spies) spy.mockRestore();
      }
    });

    it('makes no SDK client until its first call, and keeps at most MAX_CACHED_CLIENTS however many keys it sees', async () => {
      const before = cachedClientCount();
      const providers = Array.from({ length: MAX_CACHED_CLIENTS * 2 }, (_, i) =>
        createOpenAiProvider({
          baseUrl: fake.url(FAKE_OPENAI_BEHAVIOURS.toolThenAnswer),
          apiKey: `key-${i}`,
          model: 'm',
        }),
      );
      expect(cachedClientCount()).toBe(before);
      for (const provider of providers) await callOnce(provider, new AbortController().signal, () => {});
      expect(cachedClientCount()).toBe(MAX_CACHED_CLIENTS);
    });

    it('ends a stream that keeps sending chunks past its overall deadline', async () => {
      const pieces: string[] = [];
      const call = complete(
        FAKE_OPENAI_BEHAVIOURS.trickle,
        { timeoutMs: 1_000, streamMaxMs: 300 },
        new AbortController().signal,
        (delta) => void pieces.push(delta),
      );
      await expect(call).rejects.toMatchObject({ name: 'OpenAiResponseError', failure: 'too_long' });
      expect(pieces.length).toBeGreaterThan(0);
      await fake.requests.at(-1)?.closed;
    });
  });

  describe('with a failover chain', () => {
    beforeAll(() => {
      h.governance.failovers.set('flaky', { name: 'backup', kind: 'scripted' });
      h.agentConfigs.set('flaky-silence', agentOf(fake, FAKE_OPENAI_BEHAVIOURS.silence, 'flaky'));
    });

    it('fails over to the next provider when the stream goes silent, and the run completes there', async () => {
      const { terminal, events } = await run('flaky-silence', '#script finish:served by backup');
      expect(terminal.type).toBe('task.completed');
      const text = ofType(events, 'llm.completion.chunk')
        .filter((c) => c.payload.Kind === 'text')
        .map((c) => c.payload.Delta);
      expect(text).toEqual(['A partial ', 'served by backup']);
      expect(ofType(events, 'planner.decision').map((e) => e.payload.DecisionKind)).toEqual(['Finish']);
    });
  });
});

describe('openai provider, drained', () => {
  let h: EngineHarness;
  let fake: FakeOpenAi;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    h = await startEngineHarness({ EXECUTOR_DRAIN_GRACE_MS: '0' });
    h.agentConfigs.set('stall', agentOf(fake, FAKE_OPENAI_BEHAVIOURS.stall));
  });

  afterAll(async () => {
    await h?.stop();
    await fake?.stop();
  });

  it('hands a run drained during a stream back, instead of completing it with the partial answer', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, { query: 'say hello', agent_id: 'stall' });
    await watch.until((e) => e.type === 'llm.completion.chunk');
    watch.stop();
    await h.service.stop();
    await fake.requests.at(-1)?.closed;
    expect(await storedTypes(h, caller, taskId)).toEqual(['task.spawned', 'task.started', 'llm.completion.chunk']);
  });
});
