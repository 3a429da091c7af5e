import { describe, expect, it, vi } from 'vitest';
import {
  GOVERNANCE_ADMIT_LLM_CALL,
  GOVERNANCE_PROVIDER_KEY,
  GOVERNANCE_RECORD_COST,
  GOVERNANCE_RECORD_COSTS,
  MAX_RECORDED_COSTS,
  refuse,
  ServiceError,
} from '@ars/contracts';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { AdmissionPosture } from '../../src/engine/admission-posture.ts';
import { createGovernance, LlmCallRefused } from '../../src/engine/governance.ts';
import type { CostRecord } from '../../src/engine/governance.ts';

const run = { tenant: 't', user: 'u', session: 's', run: 'r' };
const admitted = (answer: { tier: string; max_tokens: number; clipped: boolean; wait_ms: number }) => ({
  allowed: true,
  model: 'm',
  ...answer,
});
const recorded = { tier: 'standard', duplicate: false, spend: [] };

function fakeRpc(answer: (endpoint: string, body: unknown) => unknown): RpcClient & { calls: [string, unknown][] } {
  const calls: [string, unknown][] = [];
  return {
    calls,
    call: async (_service: string, endpoint: string, _identity: unknown, body: unknown) => {
      calls.push([endpoint, body]);
      return answer(endpoint, body);
    },
  } as unknown as RpcClient & { calls: [string, unknown][] };
}

/** `n` costs of the run, call ids `r:<i>:1`. */
const costsOf = (n: number): CostRecord[] =>
  Array.from({ length: n }, (_, i) => ({ model: 'm', costUsd: 0.25, tokensIn: i, tokensOut: 1, callId: `r:${i}:1` }));

function fakeLogger() {
  return { warn: vi.fn(), info: vi.fn() } as unknown as Logger & { warn: ReturnType<typeof vi.fn> };
}

describe('governance client', () => {
  it('takes a refusal only from its typed reason, never from the message text', async () => {
    const rpc = fakeRpc(() => {
      throw new ServiceError('rate_limited', 'budget_exceeded: looks like a refusal, carries no reason');
    });
    const failure = await createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 100 })
      .admit(run, { model: 'm', requestedMaxTokens: 1 })
      .catch((e: unknown) => e);
    expect(failure).not.toBeInstanceOf(LlmCallRefused);
    expect(failure).toMatchObject({ code: 'rate_limited' });
  });

  it('never admits a call while governance has no responders: it asks again within the budget, then throws unavailable', async () => {
    const logger = fakeLogger();
    const rpc = fakeRpc(() => {
      throw new ServiceError('unavailable', 'no responders');
    });
    const governance = createGovernance({ rpc, logger, timeoutMs: 300 });
    const started = Date.now();
    const failure = await governance.admit(run, { model: 'm', requestedMaxTokens: 99 }).catch((e: unknown) => e);
    // `unavailable` ends the attempt as transient: the run is handed back and retried, the call not made.
    expect(failure).toMatchObject({ code: 'unavailable', retryable: true });
    expect(rpc.calls.length).toBeGreaterThan(1);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });

  it('records, fails over and reads keys only through governance: each throws unavailable while it is away', async () => {
    const rpc = fakeRpc(() => {
      throw new ServiceError('unavailable', 'no responders');
    });
    const governance = createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 60 });
    await expect(
      governance.recordCost(run, { model: 'm', costUsd: 1, tokensIn: 1, tokensOut: 1, callId: 'r:1:1' }),
    ).rejects.toMatchObject({ code: 'unavailable' });
    await expect(
      governance.failover(run, { fromProvider: 'p', hopIndex: 1, accumulatedCost: 0, reason: 'x' }),
    ).rejects.toMatchObject({ code: 'unavailable' });
    await expect(governance.providerKey(run, 'p')).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('waits for a governance that does not serve the endpoint (unimplemented) as for an absent one', async () => {
    const rpc = fakeRpc(() => {
      throw new ServiceError('unimplemented', 'not here');
    });
    await expect(
      createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 100 }).admit(run, { model: 'm', requestedMaxTokens: 1 }),
    ).rejects.toMatchObject({ code: 'unavailable', retryable: true });
  });

  it('admits once governance answers again within the budget (its subscription back after a failover)', async () => {
    let up = false;
    const logger = fakeLogger();
    const rpc = fakeRpc(() => {
      if (!up) throw new ServiceError('unavailable', 'no responders');
      return admitted({ tier: 'standard', max_tokens: 50, clipped: true, wait_ms: 0 });
    });
    setTimeout(() => (up = true), 120);
    await expect(
      createGovernance({ rpc, logger, timeoutMs: 2_000 }).admit(run, { model: 'm', requestedMaxTokens: 99 }),
    ).resolves.toEqual({ tier: 'standard', maxTokens: 50, clipped: true, waitMs: 0 });
  });

  it('warns once per outage, and says when governance answers again', async () => {
    let up = true;
    const logger = fakeLogger();
    const rpc = fakeRpc(() => {
      if (!up) throw new ServiceError('unavailable', 'no responders');
      return admitted({ tier: 'standard', max_tokens: 50, clipped: false, wait_ms: 0 });
    });
    const governance = createGovernance({ rpc, logger, timeoutMs: 10 });
    const admit = () => governance.admit(run, { model: 'm', requestedMaxTokens: 99 }).catch((e: unknown) => e);
    await admit();
    up = false;
    await admit();
    await admit();
    expect(logger.warn).toHaveBeenCalledTimes(1);
    up = true;
    await expect(admit()).resolves.toMatchObject({ tier: 'standard' });
    expect(logger.info).toHaveBeenCalledTimes(1);
  });

  it('throws a refusal as LlmCallRefused with its reason', async () => {
    const rpc = fakeRpc(() => {
      throw refuse(GOVERNANCE_ADMIT_LLM_CALL, 'budget_exceeded', 'budget_exceeded: tier "standard" spent 1.2 of 1 USD');
    });
    const refused = await createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 100 })
      .admit(run, { model: 'm', requestedMaxTokens: 1 })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LlmCallRefused);
    expect((refused as LlmCallRefused).reason).toBe('budget_exceeded');
  });

  it('throws a timeout at once (the run is retried later)', async () => {
    const rpc = fakeRpc(() => {
      throw new ServiceError('timeout', 'no answer');
    });
    await expect(
      createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 100 }).admit(run, { model: 'm', requestedMaxTokens: 1 }),
    ).rejects.toMatchObject({ code: 'timeout' });
    expect(rpc.calls).toHaveLength(1);
  });

  it('sends the bodies the internal endpoints expect', async () => {
    const rpc = fakeRpc((endpoint) =>
      endpoint === GOVERNANCE_ADMIT_LLM_CALL.name
        ? admitted({ tier: 'standard', max_tokens: 10, clipped: true, wait_ms: 5 })
        : endpoint === GOVERNANCE_PROVIDER_KEY.name
          ? { tenant: 't', provider: 'p', key: 'sk-1', fingerprint: 'sha256:0', rotated_at: '2030-01-01T00:00:00Z' }
          : endpoint === GOVERNANCE_RECORD_COST.name
            ? recorded
            : {},
    );
    const governance = createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 100 });
    await expect(governance.admit(run, { model: 'm', requestedMaxTokens: 99 })).resolves.toEqual({
      tier: 'standard',
      maxTokens: 10,
      clipped: true,
      waitMs: 5,
    });
    await governance.recordCost(run, {
      model: 'm',
      tier: 'standard',
      costUsd: 0.5,
      tokensIn: 3,
      tokensOut: 4,
      callId: 'r:2:1',
    });
    await expect(governance.providerKey(run, 'p')).resolves.toBe('sk-1');
    const previous = { model: 'm', costUsd: 0.25, tokensIn: 1, tokensOut: 2, callId: 'r:1:1' };
    await governance.admit(run, { model: 'm', requestedMaxTokens: 99, tier: 'gold', recordFirst: previous });
    expect(rpc.calls).toEqual([
      ['_governance.admit_llm_call', { identity: run, model: 'm', requested_max_tokens: 99 }],
      [
        '_governance.record_cost',
        { identity: run, model: 'm', tier: 'standard', cost_usd: 0.5, tokens_in: 3, tokens_out: 4, call_id: 'r:2:1' },
      ],
      ['_governance.provider_key', { tenant: 't', provider: 'p' }],
      [
        '_governance.admit_llm_call',
        {
          identity: run,
          model: 'm',
          tier: 'gold',
          requested_max_tokens: 99,
          record_cost: { model: 'm', cost_usd: 0.25, tokens_in: 1, tokens_out: 2, call_id: 'r:1:1' },
        },
      ],
    ]);
  });

  it('answers no key when the tenant installed none', async () => {
    const rpc = fakeRpc(() => {
      throw refuse(GOVERNANCE_PROVIDER_KEY, 'no_key', 'no key');
    });
    await expect(
      createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 100 }).providerKey(run, 'p'),
    ).resolves.toBeUndefined();
  });

  it('admits without asking only a call whose tier the posture reports open, with the max tokens asked', async () => {
    const rpc = fakeRpc(() => ({}));
    const asked: (string | undefined)[] = [];
    const posture: AdmissionPosture = {
      openTier: async (_caller, tier) => {
        asked.push(tier);
        return tier === 'gold' ? undefined : 'default';
      },
      stop: () => undefined,
    };
    const governance = createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 100, posture });
    await expect(governance.admitOpen?.(run, { model: 'm', requestedMaxTokens: 99 })).resolves.toEqual({
      tier: 'default',
      maxTokens: 99,
      clipped: false,
      waitMs: 0,
    });
    await expect(governance.admitOpen?.(run, { model: 'm', requestedMaxTokens: 99, tier: 'gold' })).resolves.toBe(
      undefined,
    );
    expect(asked).toEqual([undefined, 'gold']);
    // Without a posture every call asks governance.
    await expect(
      createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 100 }).admitOpen?.(run, {
        model: 'm',
        requestedMaxTokens: 1,
      }),
    ).resolves.toBeUndefined();
    expect(rpc.calls).toEqual([]);
  });

  it('records several costs in one record_costs request per 100, and a single cost by record_cost', async () => {
    const rpc = fakeRpc((endpoint, body) =>
      endpoint === GOVERNANCE_RECORD_COSTS.name
        ? { recorded: (body as { records: unknown[] }).records.length, duplicates: 0 }
        : recorded,
    );
    const governance = createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 100 });
    const costs = costsOf(MAX_RECORDED_COSTS + 2);
    await governance.recordCosts(run, costs.slice(0, 1));
    await governance.recordCosts(run, costs.slice(0, 3));
    await governance.recordCosts(run, costs);
    await governance.recordCosts(run, costs.slice(0, MAX_RECORDED_COSTS + 1));
    expect(rpc.calls.map(([endpoint, body]) => [endpoint, (body as { records?: unknown[] }).records?.length])).toEqual([
      ['_governance.record_cost', undefined],
      ['_governance.record_costs', 3],
      ['_governance.record_costs', MAX_RECORDED_COSTS],
      ['_governance.record_costs', 2],
      ['_governance.record_costs', MAX_RECORDED_COSTS],
      ['_governance.record_cost', undefined],
    ]);
    expect(rpc.calls[1]?.[1]).toEqual({
      identity: run,
      records: costs.slice(0, 3).map((c) => ({
        model: 'm',
        cost_usd: 0.25,
        tokens_in: c.tokensIn,
        tokens_out: 1,
        call_id: c.callId,
      })),
    });
  });

  it('records costs one by one with a governance that does not serve record_costs (mid-upgrade)', async () => {
    const rpc = fakeRpc((endpoint) => {
      if (endpoint === GOVERNANCE_RECORD_COSTS.name) throw new ServiceError('unimplemented', 'unknown endpoint');
      return recorded;
    });
    const governance = createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 100 });
    const costs = costsOf(2);
    await governance.recordCosts(run, costs);
    expect(rpc.calls.map(([endpoint]) => endpoint)).toEqual([
      '_governance.record_costs',
      '_governance.record_cost',
      '_governance.record_cost',
    ]);
  });

  it('lets any other failure of record_costs through (the run logs the costs as not recorded)', async () => {
    const rpc = fakeRpc(() => {
      throw new ServiceError('timeout', 'no reply');
    });
    const governance = createGovernance({ rpc, logger: fakeLogger(), timeoutMs: 100 });
    const costs = costsOf(2);
    await expect(governance.recordCosts(run, costs)).rejects.toMatchObject({ code: 'timeout' });
    expect(rpc.calls).toHaveLength(1);
  });
});
