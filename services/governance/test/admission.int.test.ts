import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import type { StoredEvent } from '@ars/bus';
import type { Harness, runOf } from './support/harness.ts';
import { givenPosture, startHarness, uniqueTenant } from './support/harness.ts';

const ADMIT = '_governance.admit_llm_call';
const RECORD = '_governance.record_cost';
const FAILOVER = '_governance.failover';

function keysOf(payload: Record<string, unknown>): string[] {
  return Object.keys(payload).sort();
}

describe('LLM call admission, cost and failover', () => {
  let h: Harness;
  let caller: VerifiedIdentity;
  let run: ReturnType<typeof runOf>;

  beforeAll(async () => {
    h = await startHarness({ env: { GOVERNANCE_CURRENCY_RATES: 'EUR=0.5' } });
  });
  afterAll(async () => h?.stop());

  /** A fresh tenant and run for each test, under a posture with `tiers` (the first is the default). */
  async function given(tiers: unknown[]): Promise<void> {
    ({ caller, run } = await givenPosture(h, tiers));
  }

  const admit = (body: Record<string, unknown>) =>
    h.outcome(ADMIT, { identity: run, model: 'm-1', requested_max_tokens: 100, ...body }, caller);
  const record = (cost_usd: number, extra: Record<string, unknown> = {}) =>
    h.call(RECORD, { identity: run, model: 'm-1', cost_usd, tokens_in: 5, tokens_out: 7, ...extra }, caller);
  const eventsOf = (type: string): StoredEvent[] => h.events.filter((e) => e.type === type && e.run === run.run);

  it('admits a call with no limits as asked', async () => {
    await given([{ name: 'open' }]);
    expect(await admit({})).toEqual({
      ok: true,
      result: { allowed: true, tier: 'open', model: 'm-1', max_tokens: 100, clipped: false, wait_ms: 0 },
    });
  });

  it('refuses calls once recorded costs cross the budget, with governance.budget_exceeded', async () => {
    await given([{ name: 'b', budget: { ceiling: 1, currency: 'USD', period: 'month' } }]);
    expect(await admit({})).toMatchObject({ ok: true });
    expect(await record(0.6)).toMatchObject({ tier: 'b', budget: { spent: 0.6, ceiling: 1, exceeded: false } });
    expect(await admit({})).toMatchObject({ ok: true });
    expect(await record(0.5)).toMatchObject({ budget: { spent: 1.1, exceeded: true } });

    const refused = await admit({});
    expect(refused).toMatchObject({ ok: false, code: 'rate_limited' });
    expect(refused.ok ? '' : refused.message).toMatch(/^budget_exceeded: /);
    const event = await h.waitForEvent((e) => e.type === 'governance.budget_exceeded' && e.run === run.run, 'budget');
    expect(keysOf(event.payload)).toEqual([
      'Ceiling',
      'Currency',
      'Identity',
      'Model',
      'OccurredAt',
      'Tier',
      'TotalCost',
    ]);
    expect(event.payload).toMatchObject({ Identity: run, Tier: 'b', Model: 'm-1', Ceiling: 1, Currency: 'USD' });
    expect(event.payload.TotalCost).toBeCloseTo(1.1);
    expect(event).toMatchObject({ tenant: run.tenant, user: run.user, session: run.session, run: run.run });
  });

  it('compares spend with a budget in another currency through its rate', async () => {
    await given([{ name: 'eur', budget: { ceiling: 1, currency: 'EUR', period: 'day' } }]);
    expect(await record(1.5)).toMatchObject({ budget: { spent: 0.75, currency: 'EUR', exceeded: false } });
    expect(await admit({})).toMatchObject({ ok: true });
    await record(0.5);
    expect(await admit({})).toMatchObject({ ok: false, code: 'rate_limited' });
  });

  it('admits again when a new budget period starts', async () => {
    await given([{ name: 'daily', budget: { ceiling: 1, period: 'day' } }]);
    await record(2);
    expect(await admit({})).toMatchObject({ ok: false });
    h.clock.advance(24 * 60 * 60 * 1000);
    expect(await admit({})).toMatchObject({ ok: true });
  });

  it("records the previous call's cost given with an admission first: a budget it crosses refuses that admission", async () => {
    await given([{ name: 'b', budget: { ceiling: 1, currency: 'USD', period: 'month' } }]);
    const previous = (cost_usd: number, call_id: string) => ({
      record_cost: { model: 'm-1', cost_usd, tokens_in: 5, tokens_out: 7, call_id },
    });
    expect(await admit(previous(0.6, 'c1'))).toMatchObject({
      ok: true,
      result: { allowed: true, recorded: { tier: 'b', duplicate: false, budget: { spent: 0.6, exceeded: false } } },
    });
    // The same call again (a retried admission) adds nothing.
    expect(await admit(previous(0.6, 'c1'))).toMatchObject({ ok: true, result: { recorded: { duplicate: true } } });
    const refused = await admit(previous(0.5, 'c2'));
    expect(refused).toMatchObject({ ok: false, code: 'rate_limited' });
    expect(refused.ok ? '' : refused.message).toMatch(/^budget_exceeded: /);
    // Refused, yet the cost it carried stays recorded.
    expect(await record(0, { call_id: 'c2' })).toMatchObject({
      duplicate: true,
      budget: { spent: 1.1, exceeded: true },
    });
  });

  it('refuses a malformed record_cost before recording or admitting anything', async () => {
    await given([{ name: 'b', budget: { ceiling: 1, currency: 'USD', period: 'month' } }]);
    for (const record_cost of [{ model: 'm-1', cost_usd: -1, tokens_in: 0, tokens_out: 0 }, { cost_usd: 1 }, 'x']) {
      expect(await admit({ record_cost })).toMatchObject({ ok: false, code: 'invalid_request' });
    }
    expect(await record(0)).toMatchObject({ budget: { spent: 0 } });
  });

  it('records a call once per call_id', async () => {
    await given([{ name: 'idem' }]);
    expect(await record(1, { call_id: 'run:1:0' })).toMatchObject({ duplicate: false });
    const again = (await record(1, { call_id: 'run:1:0' })) as {
      duplicate: boolean;
      spend: { period: string; spent_usd: number; calls: number }[];
    };
    expect(again.duplicate).toBe(true);
    expect(again.spend.find((w) => w.period === 'total')).toMatchObject({ spent_usd: 1, calls: 1 });
  });

  it('clips max tokens above the cap and publishes governance.maxtokens_exceeded', async () => {
    await given([{ name: 'clip', max_tokens: 64 }]);
    expect(await admit({ requested_max_tokens: 500 })).toMatchObject({
      ok: true,
      result: { max_tokens: 64, clipped: true },
    });
    const event = await h.waitForEvent(
      (e) => e.type === 'governance.maxtokens_exceeded' && e.run === run.run,
      'maxtokens',
    );
    expect(keysOf(event.payload)).toEqual(['Cap', 'Identity', 'Model', 'OccurredAt', 'Requested', 'Tier']);
    expect(event.payload).toMatchObject({ Identity: run, Tier: 'clip', Model: 'm-1', Requested: 500, Cap: 64 });
  });

  it('refuses max tokens above the cap under the refuse policy', async () => {
    await given([{ name: 'strict', max_tokens: 64, max_tokens_policy: 'refuse' }]);
    const refused = await admit({ requested_max_tokens: 65 });
    expect(refused).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(refused.ok ? '' : refused.message).toMatch(/^max_tokens_exceeded: /);
    await h.waitForEvent((e) => e.type === 'governance.maxtokens_exceeded' && e.run === run.run, 'maxtokens');
    expect(await admit({ requested_max_tokens: 64 })).toMatchObject({ ok: true, result: { clipped: false } });
    expect(eventsOf('governance.maxtokens_exceeded')).toHaveLength(1);
  });

  it('delays a call under the wait policy and publishes governance.rate_limited', async () => {
    await given([{ name: 'wait', rate_limit: { capacity: 2, refill_tokens: 1, refill_every_ms: 1000 } }]);
    expect(await admit({})).toMatchObject({ ok: true, result: { wait_ms: 0 } });
    expect(await admit({})).toMatchObject({ ok: true, result: { wait_ms: 0 } });
    expect(await admit({})).toMatchObject({ ok: true, result: { wait_ms: 1000 } });
    expect(await admit({})).toMatchObject({ ok: true, result: { wait_ms: 2000 } });
    const event = await h.waitForEvent(
      (e) => e.type === 'governance.rate_limited' && e.run === run.run,
      'rate_limited',
    );
    expect(keysOf(event.payload)).toEqual([
      'Available',
      'Capacity',
      'Identity',
      'Model',
      'OccurredAt',
      'RefillEvery',
      'RefillTokens',
      'Requested',
      'Tier',
    ]);
    expect(event.payload).toMatchObject({
      Identity: run,
      Tier: 'wait',
      Model: 'm-1',
      Requested: 1,
      Available: 0,
      Capacity: 2,
      RefillTokens: 1,
      RefillEvery: 1_000_000_000,
    });
    expect(eventsOf('governance.rate_limited')).toHaveLength(2);
  });

  it('refuses a call under the fail policy until the bucket refills', async () => {
    await given([
      { name: 'fail', rate_limit: { capacity: 1, refill_tokens: 1, refill_every_ms: 500, on_limit: 'fail' } },
    ]);
    expect(await admit({})).toMatchObject({ ok: true });
    const refused = await admit({});
    expect(refused).toMatchObject({ ok: false, code: 'rate_limited' });
    expect(refused.ok ? '' : refused.message).toMatch(/^rate_limited: .*retry in 500 ms/);
    await h.waitForEvent((e) => e.type === 'governance.rate_limited' && e.run === run.run, 'rate_limited');
    h.clock.advance(500);
    expect(await admit({})).toMatchObject({ ok: true, result: { wait_ms: 0 } });
  });

  it('refuses a wait longer than max_wait_ms', async () => {
    await given([
      { name: 'short', rate_limit: { capacity: 1, refill_tokens: 1, refill_every_ms: 1000, max_wait_ms: 999 } },
    ]);
    expect(await admit({})).toMatchObject({ ok: true });
    expect(await admit({})).toMatchObject({ ok: false, code: 'rate_limited' });
  });

  it('keeps one bucket per model and meters tokens when told', async () => {
    await given([
      {
        name: 'tok',
        rate_limit: { capacity: 1000, refill_tokens: 100, refill_every_ms: 1000, unit: 'tokens', on_limit: 'fail' },
      },
    ]);
    expect(await admit({ requested_max_tokens: 600 })).toMatchObject({ ok: true });
    expect(await admit({ requested_max_tokens: 600 })).toMatchObject({ ok: false, code: 'rate_limited' });
    expect(await admit({ requested_max_tokens: 400 })).toMatchObject({ ok: true });
    expect(await admit({ model: 'm-2', requested_max_tokens: 600 })).toMatchObject({ ok: true });
    expect(await admit({ model: 'm-2', requested_max_tokens: 1001 })).toMatchObject({
      ok: false,
      code: 'rate_limited',
    });
  });

  it('admits exactly the capacity out of concurrent calls', async () => {
    await given([
      { name: 'burst', rate_limit: { capacity: 5, refill_tokens: 1, refill_every_ms: 60_000, on_limit: 'fail' } },
    ]);
    const outcomes = await Promise.all(Array.from({ length: 12 }, () => admit({})));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(5);
  });

  it('refuses a model the tier does not allow', async () => {
    await given([{ name: 'listed', models: ['m-ok'] }]);
    const refused = await admit({ model: 'm-1' });
    expect(refused).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(refused.ok ? '' : refused.message).toMatch(/^model_not_allowed: /);
    expect(await admit({ model: 'm-ok' })).toMatchObject({ ok: true });
  });

  it('applies the default tier to an unknown tier name', async () => {
    await given([{ name: 'base', max_tokens: 10 }, { name: 'other' }]);
    expect(await admit({ tier: 'gone' })).toMatchObject({ ok: true, result: { tier: 'base', max_tokens: 10 } });
    expect(await admit({ tier: 'other' })).toMatchObject({ ok: true, result: { tier: 'other', max_tokens: 100 } });
  });

  it.each([
    ['without requested_max_tokens', { requested_max_tokens: undefined }],
    ['with a zero max tokens', { requested_max_tokens: 0 }],
    ['with an unknown member', { colour: 'red' }],
  ])('refuses an admission %s', async (_label, extra) => {
    await given([{ name: 'x' }]);
    expect(await admit(extra)).toMatchObject({ ok: false, code: 'invalid_request' });
  });

  it('refuses an admission for another tenant than the calling identity', async () => {
    await given([{ name: 'x' }]);
    const outcome = await h.outcome(
      ADMIT,
      { identity: { ...run, tenant: uniqueTenant() }, model: 'm-1', requested_max_tokens: 1 },
      caller,
    );
    expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
  });

  it('refuses a negative cost', async () => {
    await given([{ name: 'x' }]);
    const outcome = await h.outcome(
      RECORD,
      { identity: run, model: 'm', cost_usd: -1, tokens_in: 0, tokens_out: 0 },
      caller,
    );
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
  });

  it('fails over along the chain hop by hop with governance.failover, then answers none', async () => {
    const chain = [
      { name: 'p1', kind: 'openai', model: 'a' },
      { name: 'p2', kind: 'openai', model: 'b' },
      { name: 'p3', kind: 'scripted' },
    ];
    await given([{ name: 'fo', failover: chain }]);
    const hop = (from_provider: string, hop_index: number, accumulated_cost: number) =>
      h.call(FAILOVER, { identity: run, from_provider, hop_index, accumulated_cost, reason: 'HTTP 502' }, caller);

    expect(await hop('p1', 1, 0.01)).toEqual({ provider: chain[1], hop_index: 1, remaining_hops: 1 });
    expect(await hop('p2', 2, 0.03)).toEqual({ provider: chain[2], hop_index: 2, remaining_hops: 0 });
    expect(await hop('p3', 3, 0.05)).toEqual({ provider: null, hop_index: 3, remaining_hops: 0 });

    await h.waitForEvent(
      (e) => e.type === 'governance.failover' && e.run === run.run && e.payload.HopIndex === 2,
      'failover',
    );
    const events = eventsOf('governance.failover');
    expect(events).toHaveLength(2);
    expect(keysOf(events[0]!.payload)).toEqual([
      'AccumCostUSD',
      'FromProvider',
      'HopIndex',
      'Identity',
      'Reason',
      'ToProvider',
    ]);
    expect(events.map((e) => e.payload)).toEqual([
      { Identity: run, FromProvider: 'p1', ToProvider: 'p2', HopIndex: 1, AccumCostUSD: 0.01, Reason: 'HTTP 502' },
      { Identity: run, FromProvider: 'p2', ToProvider: 'p3', HopIndex: 2, AccumCostUSD: 0.03, Reason: 'HTTP 502' },
    ]);
  });

  it('fails over to the chain head from a provider outside the chain', async () => {
    await given([{ name: 'fo', failover: [{ name: 'p1', kind: 'openai' }] }]);
    const result = await h.call(
      FAILOVER,
      { identity: run, from_provider: 'agent-own', hop_index: 1, accumulated_cost: 0, reason: 'timeout' },
      caller,
    );
    expect(result).toMatchObject({ provider: { name: 'p1' }, remaining_hops: 0 });
  });

  it('refuses a failover with hop_index 0', async () => {
    await given([{ name: 'fo' }]);
    const outcome = await h.outcome(
      FAILOVER,
      { identity: run, from_provider: 'p', hop_index: 0, accumulated_cost: 0, reason: 'x' },
      caller,
    );
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
  });
});
