import { describe, expect, it } from 'vitest';
import type { Admission, CostRecord, FailoverTarget, Governance } from '../../src/engine/governance.ts';
import { LlmCallRefused } from '../../src/engine/governance.ts';
import { costOf, governedCompletion, ProviderFailure } from '../../src/engine/llm-call.ts';
import type { GovernedCallContext, RunLlm } from '../../src/engine/llm-call.ts';
import type { CompletionRequest, CompletionResult, LlmProvider } from '../../src/providers/provider.ts';

const quad = { tenant: 't', user: 'u', session: 's', run: 'r' };

function result(model: string, costUsd = 0): CompletionResult {
  return {
    decision: { kind: 'finish', answer: 'ok' },
    reasoning: '',
    model,
    usage: { input_tokens: 1000, output_tokens: 500 },
    costUsd,
    contextWindowTokens: 0,
  };
}

function provider(
  behaviour: (request: CompletionRequest) => CompletionResult,
): LlmProvider & { seen: CompletionRequest[] } {
  const seen: CompletionRequest[] = [];
  return {
    kind: 'fake',
    seen,
    complete: async (request) => {
      seen.push(request);
      return behaviour(request);
    },
  };
}

interface FakeGovernance extends Governance {
  readonly admitted: { model: string; requestedMaxTokens: number; recordFirst?: CostRecord }[];
  readonly costs: unknown[];
  /** The costs sent together (`recordCosts`), a list per request. */
  readonly batches: CostRecord[][];
  readonly failovers: unknown[];
}

function fakeGovernance(options: {
  admission?: Partial<Admission>;
  refuse?: Error;
  chain?: FailoverTarget[];
  /** The tier calls are admitted in without asking (absent: governance decides every call). */
  openTier?: string;
}): FakeGovernance {
  const admitted: FakeGovernance['admitted'] = [];
  const costs: unknown[] = [];
  const batches: CostRecord[][] = [];
  const failovers: unknown[] = [];
  return {
    admitted,
    costs,
    batches,
    failovers,
    async admitOpen(_run, call) {
      const tier = options.openTier;
      return tier === undefined ? undefined : { tier, maxTokens: call.requestedMaxTokens, clipped: false, waitMs: 0 };
    },
    async recordCosts(_run, calls) {
      batches.push([...calls]);
    },
    async admit(_run, call) {
      admitted.push(call);
      if (options.refuse !== undefined) throw options.refuse;
      return {
        tier: 'standard',
        maxTokens: call.requestedMaxTokens,
        clipped: false,
        waitMs: 0,
        ...options.admission,
      };
    },
    async recordCost(_run, call) {
      costs.push(call);
    },
    async failover(_run, call) {
      failovers.push(call);
      return options.chain?.[call.hopIndex - 1] ?? null;
    },
    async providerKey() {
      return 'sk-next';
    },
  };
}

function context(llm: RunLlm, governance: Governance, overrides: Partial<GovernedCallContext> = {}) {
  const deferred: Promise<void>[] = [];
  const held: CostRecord[] = [];
  const ctx: GovernedCallContext & { deferred: Promise<void>[]; held: CostRecord[] } = {
    taskId: 'r',
    claim: 'c1',
    quad,
    llm,
    governance,
    settings: {
      defaultMaxTokens: 4096,
      llmPrices: {},
      llmApiKey: undefined,
      llmTimeoutMs: 1000,
      captureLlmContent: false,
    },
    interrupted: () => false,
    pauseStep: async () => true,
    settleCost: async () => undefined,
    deferCost: (record) => void deferred.push(record),
    holdCost: (record) => void held.push(record),
    takeHeldCost: () => held.splice(0),
    brokerKey: async () => 'sk-broker',
    refuseBrokerKey: () => undefined,
    deferred,
    held,
    ...overrides,
  };
  return ctx;
}

const request: Omit<CompletionRequest, 'params'> = {
  taskId: 'r',
  step: 0,
  query: '#script finish:ok',
  goal: '#script finish:ok',
  system: '',
  messages: [],
  tools: [],
  signal: new AbortController().signal,
  onChunk: () => undefined,
};

describe('a governed LLM call', () => {
  it('asks the provider for the admitted (clipped) max tokens and holds the cost with call id run:step:attempt', async () => {
    const p = provider(() => result('m1', 0.25));
    const governance = fakeGovernance({ admission: { maxTokens: 500, clipped: true } });
    const ctx = context(
      { provider: p, settings: { kind: 'scripted' }, params: { model: 'm1', max_tokens: 2000 } },
      governance,
    );
    await expect(governedCompletion(ctx, request, 3)).resolves.toMatchObject({ costUsd: 0.25 });
    expect(governance.admitted).toEqual([{ model: 'm1', requestedMaxTokens: 2000 }]);
    expect(p.seen[0]?.params).toMatchObject({ model: 'm1', max_tokens: 500 });
    expect(ctx.held).toEqual([
      { model: 'm1', tier: 'standard', costUsd: 0.25, tokensIn: 1000, tokensOut: 500, callId: 'r:3:1:c1' },
    ]);
    expect(ctx.deferred).toHaveLength(0);
  });

  it("carries the previous call's held cost with the admission, once, and holds its own", async () => {
    const governance = fakeGovernance({});
    const ctx = context(
      { provider: provider(() => result('m', 0.5)), settings: { kind: 'scripted' }, params: {} },
      governance,
    );
    await governedCompletion(ctx, request, 1);
    await governedCompletion(ctx, request, 2);
    expect(governance.admitted.map((a) => a.recordFirst?.callId)).toEqual([undefined, 'r:1:1:c1']);
    expect(ctx.held.map((r) => r.callId)).toEqual(['r:2:1:c1']);
    expect(governance.costs).toEqual([]);
  });

  it('gives the same step called again by a later claim of the run (a replay) a call id of its own', async () => {
    const governance = fakeGovernance({});
    const llm: RunLlm = { provider: provider(() => result('m', 0.5)), settings: { kind: 'scripted' }, params: {} };
    const first = context(llm, governance, { claim: 'c1' });
    const replay = context(llm, governance, { claim: 'c2' });
    await governedCompletion(first, request, 1);
    await governedCompletion(replay, request, 1);
    const ids = [...first.held, ...replay.held].map((r) => r.callId);
    expect(ids).toEqual(['r:1:1:c1', 'r:1:1:c2']);
  });

  it('sends the held cost on its own when the admission fails other than by a refusal', async () => {
    const timeout = new Error('governance timed out');
    const governance = fakeGovernance({ refuse: timeout });
    const ctx = context(
      { provider: provider(() => result('m')), settings: { kind: 'scripted' }, params: {} },
      governance,
    );
    const previous: CostRecord = { model: 'm', costUsd: 1, tokensIn: 1, tokensOut: 1, callId: 'r:1:1' };
    ctx.held.push(previous);
    await expect(governedCompletion(ctx, request, 2)).rejects.toBe(timeout);
    expect(governance.admitted[0]?.recordFirst).toEqual(previous);
    await Promise.all(ctx.deferred);
    expect(governance.costs).toEqual([previous]);
  });

  it('does not send the held cost again after a refusal (governance recorded it first)', async () => {
    const refusal = new LlmCallRefused('budget_exceeded', 'budget_exceeded: spent');
    const governance = fakeGovernance({ refuse: refusal });
    const ctx = context(
      { provider: provider(() => result('m')), settings: { kind: 'scripted' }, params: {} },
      governance,
    );
    ctx.held.push({ model: 'm', costUsd: 1, tokensIn: 1, tokensOut: 1, callId: 'r:1:1' });
    await expect(governedCompletion(ctx, request, 2)).rejects.toBe(refusal);
    expect(governance.admitted[0]?.recordFirst?.callId).toBe('r:1:1');
    expect(ctx.deferred).toHaveLength(0);
  });

  it('admits a call of a tier that admits every call without asking, its cost held with the others', async () => {
    const governance = fakeGovernance({ openTier: 'default' });
    const ctx = context(
      { provider: provider(() => result('m', 0.5)), settings: { kind: 'scripted' }, params: { max_tokens: 2000 } },
      governance,
    );
    const p = ctx.llm.provider as ReturnType<typeof provider>;
    await governedCompletion(ctx, request, 1);
    await governedCompletion(ctx, request, 2);
    expect(governance.admitted).toEqual([]);
    expect(p.seen.map((r) => r.params.max_tokens)).toEqual([2000, 2000]);
    expect(ctx.held.map((r) => [r.callId, r.tier])).toEqual([
      ['r:1:1:c1', 'default'],
      ['r:2:1:c1', 'default'],
    ]);
    expect([governance.costs, governance.batches, ctx.deferred]).toEqual([[], [], []]);
  });

  it('records every held cost before governance admits: all but the last first (awaited), the last carried', async () => {
    const governance = fakeGovernance({});
    const order: string[] = [];
    const ctx = context(
      { provider: provider(() => result('m')), settings: { kind: 'scripted' }, params: {} },
      governance,
      { settleCost: async () => void order.push('settled') },
    );
    const held = [1, 2, 3].map((step): CostRecord => ({
      model: 'm',
      costUsd: 1,
      tokensIn: 1,
      tokensOut: 1,
      callId: `r:${step}:1`,
    }));
    ctx.held.push(...held);
    const admit = governance.admit.bind(governance);
    governance.admit = async (run, call) => {
      order.push('admit');
      return admit(run, call);
    };
    await governedCompletion(ctx, request, 4);
    expect(governance.batches).toEqual([held.slice(0, 2)]);
    expect(governance.admitted[0]?.recordFirst).toEqual(held[2]);
    // Once at the call's start, once after sending the two: both before the admission.
    expect(order).toEqual(['settled', 'settled', 'admit']);
    expect(ctx.held.map((r) => r.callId)).toEqual(['r:4:1:c1']);
  });

  it('asks for LLM_DEFAULT_MAX_TOKENS when the run sets none', async () => {
    const governance = fakeGovernance({});
    const ctx = context(
      { provider: provider(() => result('scripted')), settings: { kind: 'scripted' }, params: {} },
      governance,
    );
    await governedCompletion(ctx, request, 1);
    expect(governance.admitted).toEqual([{ model: 'scripted', requestedMaxTokens: 4096 }]);
  });

  it('waits the admitted wait_ms first, and gives up the call when the wait is interrupted', async () => {
    const p = provider(() => result('m'));
    const waits: number[] = [];
    const ctx = context(
      { provider: p, settings: { kind: 'scripted' }, params: {} },
      fakeGovernance({ admission: { waitMs: 750 } }),
      {
        pauseStep: async (ms) => {
          waits.push(ms);
          return false;
        },
      },
    );
    await expect(governedCompletion(ctx, request, 1)).resolves.toBeUndefined();
    expect(waits).toEqual([750]);
    expect(p.seen).toHaveLength(0);
  });

  it('drops the decision of a call that returns after the run was interrupted, and holds its cost', async () => {
    let interrupted = false;
    const p = provider(() => {
      // A hard cancel or a drain while the provider was streaming; it returned anyway.
      interrupted = true;
      return result('m', 0.25);
    });
    const ctx = context({ provider: p, settings: { kind: 'scripted' }, params: {} }, fakeGovernance({}), {
      interrupted: () => interrupted,
    });
    await expect(governedCompletion(ctx, request, 1)).resolves.toBeUndefined();
    expect(ctx.held).toEqual([expect.objectContaining({ costUsd: 0.25, callId: 'r:1:1:c1' })]);
  });

  it('lets a refusal through without calling the provider', async () => {
    const p = provider(() => result('m'));
    const refusal = new LlmCallRefused('budget_exceeded', 'budget_exceeded: spent');
    const ctx = context(
      { provider: p, settings: { kind: 'scripted' }, params: {} },
      fakeGovernance({ refuse: refusal }),
    );
    await expect(governedCompletion(ctx, request, 1)).rejects.toBe(refusal);
    expect(p.seen).toHaveLength(0);
  });

  it('fails over on a provider error, skipping chain entries of unknown kinds, and stays on the new provider', async () => {
    const failing = provider(() => {
      throw new Error('503 overloaded');
    });
    const governance = fakeGovernance({
      chain: [
        { name: 'exotic', kind: 'carrier-pigeon' },
        { name: 'backup', kind: 'scripted' },
      ],
    });
    const llm: RunLlm = {
      provider: failing,
      settings: { kind: 'openai', name: 'primary', model: 'gpt-x' },
      params: {},
    };
    const ctx = context(llm, governance);
    const attempts: string[] = [];
    await expect(
      governedCompletion(ctx, { ...request, onAttempt: (id) => attempts.push(id) }, 2),
    ).resolves.toMatchObject({ model: 'gpt-x' });
    // Each provider call is announced with its own id before it streams: the failover's chunks carry the new one.
    expect(attempts).toEqual(['r:2:1:c1', 'r:2:2:c1']);
    expect(governance.failovers).toEqual([
      { tier: 'standard', fromProvider: 'primary', hopIndex: 1, accumulatedCost: 0, reason: '503 overloaded' },
      expect.objectContaining({ fromProvider: 'exotic', hopIndex: 2 }),
    ]);
    expect(governance.admitted.map((a) => a.model)).toEqual(['gpt-x', 'gpt-x']);
    expect(ctx.llm.settings).toMatchObject({ kind: 'scripted', name: 'backup' });
    expect(ctx.held).toEqual([expect.objectContaining({ callId: 'r:2:2:c1' })]);
  });

  it('fails with ProviderFailure when the chain has nothing left', async () => {
    const failing = provider(() => {
      throw new Error('boom');
    });
    const ctx = context({ provider: failing, settings: { kind: 'scripted' }, params: {} }, fakeGovernance({}));
    await expect(governedCompletion(ctx, request, 1)).rejects.toBeInstanceOf(ProviderFailure);
  });

  it("prices a call whose provider reports no cost from the price table's per-million rates", () => {
    expect(costOf(result('m'), { m: { input: 2, output: 10 } })).toBeCloseTo(0.007);
    expect(costOf(result('m', 0.5), { m: { input: 2, output: 10 } })).toBe(0.5);
    expect(costOf(result('other'), { m: { input: 2, output: 10 } })).toBe(0);
  });
});
