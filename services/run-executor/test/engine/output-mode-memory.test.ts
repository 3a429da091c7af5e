import { describe, expect, it } from 'vitest';
import type { Governance } from '../../src/engine/governance.ts';
import { governedCompletion } from '../../src/engine/llm-call.ts';
import type { GovernedCallContext } from '../../src/engine/llm-call.ts';
import { OutputModeMemory } from '../../src/engine/output-mode-memory.ts';
import { OutputModeRefused } from '../../src/providers/provider.ts';
import type { CompletionRequest, LlmProvider, OutputMode } from '../../src/providers/provider.ts';

const at = (model: string, name = 'local') => ({ settings: { kind: 'openai' as const, name }, model });

describe('OutputModeMemory', () => {
  it('remembers a downgrade per provider and model until its TTL passes', () => {
    let now = 0;
    const memory = new OutputModeMemory({ ttlMs: 1000, now: () => now });
    memory.remember(at('m1'), 'json');
    expect(memory.recall(at('m1'))).toBe('json');
    expect(memory.recall(at('m2'))).toBeUndefined();
    expect(memory.recall(at('m1', 'other'))).toBeUndefined();
    now = 1000;
    expect(memory.recall(at('m1'))).toBeUndefined();
    expect(memory.size).toBe(0);
  });

  it('drops the least recently used entry past its bound', () => {
    const memory = new OutputModeMemory({ maxEntries: 2 });
    memory.remember(at('a'), 'json');
    memory.remember(at('b'), 'text');
    memory.recall(at('a'));
    memory.remember(at('c'), 'json');
    expect([memory.recall(at('a')), memory.recall(at('b')), memory.recall(at('c'))]).toEqual([
      'json',
      undefined,
      'json',
    ]);
  });
});

const governance: Governance = {
  admit: async (_run, call) => ({ tier: 't', maxTokens: call.requestedMaxTokens, clipped: false, waitMs: 0 }),
  recordCost: async () => undefined,
  recordCosts: async () => undefined,
  failover: async () => null,
  providerKey: async () => undefined,
};

/** A provider refusing native tool calls; records the mode of each request. */
function refusingTools(): LlmProvider & { modes: OutputMode[] } {
  const modes: OutputMode[] = [];
  return {
    kind: 'fake',
    modes,
    complete: async (request) => {
      modes.push(request.outputMode ?? 'tools');
      if (request.outputMode === 'tools') throw new OutputModeRefused('tools', 'tools are not supported');
      const usage = { input_tokens: 1, output_tokens: 1 };
      return {
        decision: { kind: 'finish', answer: 'ok' },
        reasoning: '',
        model: 'm',
        usage,
        costUsd: 0,
        contextWindowTokens: 0,
      };
    },
  };
}

function runContext(provider: LlmProvider, modes: OutputModeMemory, events: string[]): GovernedCallContext {
  return {
    taskId: 'r',
    claim: 'c',
    quad: { tenant: 't', user: 'u', session: 's', run: 'r' },
    llm: { provider, settings: { kind: 'openai', name: 'local', baseUrl: 'http://x' }, params: { model: 'm' } },
    governance,
    settings: {
      defaultMaxTokens: 100,
      llmPrices: {},
      llmApiKey: undefined,
      llmTimeoutMs: 1000,
      captureLlmContent: false,
    },
    interrupted: () => false,
    pauseStep: async () => true,
    settleCost: async () => undefined,
    deferCost: () => undefined,
    holdCost: () => undefined,
    takeHeldCost: () => [],
    brokerKey: async () => 'k',
    refuseBrokerKey: () => undefined,
    emit: (type) => void events.push(type),
    modes,
  };
}

const request: Omit<CompletionRequest, 'params'> = {
  taskId: 'r',
  step: 0,
  query: 'q',
  goal: 'q',
  system: '',
  messages: [],
  tools: [],
  signal: new AbortController().signal,
  onChunk: () => undefined,
};

describe('output modes across runs', () => {
  it('starts the next run of a downgraded model in the mode that worked', async () => {
    const modes = new OutputModeMemory();
    const provider = refusingTools();
    const first: string[] = [];
    await governedCompletion(runContext(provider, modes, first), request, 1);
    const second: string[] = [];
    await governedCompletion(runContext(provider, modes, second), request, 1);
    expect(provider.modes).toEqual(['tools', 'json', 'json']);
    expect(first).toEqual(['llm.mode_downgraded']);
    expect(second).toEqual([]);
  });
});
