import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GovernanceRecordCostsReply, MAX_RECORDED_COSTS } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { Harness } from './support/harness.ts';
import { givenPosture, identityOf, runOf, startHarness, uniqueTenant } from './support/harness.ts';

/**
 * `_governance.record_costs`: the engine sends the costs of a run's calls it
 * admitted itself (in tiers that constrain nothing) together. Each record
 * must count exactly as `_governance.record_cost` would count it, since the
 * budgets, the posture reads and the receipts cannot tell the two apart.
 */

const RECORD = '_governance.record_cost';
const RECORD_COSTS = '_governance.record_costs';
const ADMIT = '_governance.admit_llm_call';

/** One spend window as `_governance.tenant_budget` lists it. */
interface Window {
  tier: string;
  period: string;
  period_start: string;
  spent_usd: number;
  tokens_in: number;
  tokens_out: number;
  calls: number;
}

// Costs exact in binary: sums of them compare exactly whatever order they are added in.
const RECORDS = [
  { model: 'm-1', cost_usd: 0.25, tokens_in: 10, tokens_out: 20, call_id: 'run:1:0' },
  { model: 'm-2', cost_usd: 0.5, tokens_in: 3, tokens_out: 4 },
  { model: 'm-1', cost_usd: 0.125, tokens_in: 1, tokens_out: 0, call_id: 'run:2:0' },
];

describe('_governance.record_costs', () => {
  let h: Harness;
  let caller: VerifiedIdentity;
  let run: ReturnType<typeof runOf>;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  /** A fresh tenant and run for each test, under a posture with `tiers` (the first is the default). */
  async function given(tiers: unknown[]): Promise<void> {
    ({ caller, run } = await givenPosture(h, tiers));
  }

  const recordCosts = async (records: unknown[], who: VerifiedIdentity = caller, identity: unknown = run) =>
    GovernanceRecordCostsReply.parse(await h.call(RECORD_COSTS, { identity, records }, who));
  const record = (body: Record<string, unknown>, who: VerifiedIdentity = caller, identity: unknown = run) =>
    h.call(RECORD, { identity, ...body }, who) as Promise<{ duplicate: boolean }>;
  /** The tenant's current spend windows, read as governance.posture reads them. */
  const spendOf = async (who: VerifiedIdentity = caller): Promise<Window[]> => {
    const reply = (await h.call('_governance.tenant_budget', { tenant: who.tenant }, who)) as { spend: Window[] };
    return reply.spend;
  };
  const totalOf = async (tier: string, who: VerifiedIdentity = caller) =>
    (await spendOf(who)).find((w) => w.tier === tier && w.period === 'total');

  it("adds a run's records to every spend window of the tenant, as record_cost one by one would", async () => {
    await given([{ name: 'base' }]);
    expect(await recordCosts(RECORDS)).toEqual({ recorded: 3, duplicates: 0 });

    // Another tenant fed the same records one by one is the reference.
    const other = identityOf(uniqueTenant(), []);
    const otherRun = runOf(other, run.run);
    for (const one of RECORDS) expect(await record(one, other, otherRun)).toMatchObject({ duplicate: false });

    const batched = await spendOf();
    expect(batched.map((w) => w.period).sort()).toEqual(['day', 'month', 'total']);
    for (const window of batched) {
      expect(window).toMatchObject({ tier: 'base', spent_usd: 0.875, tokens_in: 14, tokens_out: 24, calls: 3 });
    }
    expect(batched).toEqual(await spendOf(other));
  });

  it('counts a call_id recorded before (by record_cost, earlier in the batch or by an earlier batch) as a duplicate and adds nothing for it', async () => {
    await given([{ name: 'base' }]);
    const cost = (call_id: string, cost_usd: number) => ({
      model: 'm-1',
      cost_usd,
      tokens_in: 1,
      tokens_out: 2,
      call_id,
    });
    expect(await record(cost('c1', 1))).toMatchObject({ duplicate: false });

    expect(await recordCosts([cost('c1', 8), cost('c2', 0.5), cost('c2', 8), cost('c3', 0.25)])).toEqual({
      recorded: 2,
      duplicates: 2,
    });
    expect(await recordCosts([cost('c2', 8), cost('c3', 8), cost('c4', 0.125)])).toEqual({
      recorded: 1,
      duplicates: 2,
    });
    // A record without a call_id is never a duplicate, even of an identical one.
    const anonymous = { model: 'm-1', cost_usd: 0.0625, tokens_in: 1, tokens_out: 2 };
    expect(await recordCosts([anonymous, anonymous])).toEqual({ recorded: 2, duplicates: 0 });

    expect(await totalOf('base')).toMatchObject({ spent_usd: 2, tokens_in: 6, tokens_out: 12, calls: 6 });
    // The receipts a batch wrote make record_cost's call a duplicate too.
    expect(await record(cost('c4', 8))).toMatchObject({ duplicate: true });
    expect(await totalOf('base')).toMatchObject({ spent_usd: 2, calls: 6 });
  });

  it("adds each record to its tier's spend, an absent or unknown tier to the default tier's", async () => {
    await given([{ name: 'base' }, { name: 'gold' }]);
    const cost = (tier: string | undefined, cost_usd: number) => ({
      model: 'm-1',
      ...(tier === undefined ? {} : { tier }),
      cost_usd,
      tokens_in: 1,
      tokens_out: 1,
    });
    expect(
      await recordCosts([cost('gold', 2), cost(undefined, 0.5), cost('gold', 1), cost('gone', 0.25), cost('base', 4)]),
    ).toEqual({ recorded: 5, duplicates: 0 });

    expect(await totalOf('gold')).toMatchObject({ spent_usd: 3, tokens_in: 2, calls: 2 });
    expect(await totalOf('base')).toMatchObject({ spent_usd: 4.75, tokens_in: 3, calls: 3 });
    expect(await totalOf('gone')).toBeUndefined();
  });

  it("refuses the tier's next admission with budget_exceeded once a batch crosses its budget", async () => {
    await given([{ name: 'b', budget: { ceiling: 1, currency: 'USD', period: 'month' } }, { name: 'free' }]);
    const admit = (tier: string) =>
      h.outcome(ADMIT, { identity: run, model: 'm-1', tier, requested_max_tokens: 100 }, caller);
    const cost = (tier: string, cost_usd: number) => ({ model: 'm-1', tier, cost_usd, tokens_in: 1, tokens_out: 1 });

    // Short of the ceiling (and the other tier's costs are not the budgeted tier's): still admitted.
    await recordCosts([cost('b', 0.25), cost('b', 0.5), cost('free', 5)]);
    expect(await admit('b')).toMatchObject({ ok: true, result: { allowed: true, tier: 'b' } });

    await recordCosts([cost('free', 0.125), cost('b', 0.25)]);
    const refused = await admit('b');
    expect(refused).toMatchObject({ ok: false, code: 'rate_limited' });
    expect(refused.ok ? '' : refused.message).toMatch(/^budget_exceeded: /);
    expect(await admit('free')).toMatchObject({ ok: true, result: { tier: 'free' } });
  });

  it('accepts exactly MAX_RECORDED_COSTS records', async () => {
    await given([{ name: 'base' }]);
    const records = Array.from({ length: MAX_RECORDED_COSTS }, (_, i) => ({
      model: 'm-1',
      cost_usd: 0.5,
      tokens_in: 1,
      tokens_out: 1,
      call_id: `run:${i}:0`,
    }));
    expect(await recordCosts(records)).toEqual({ recorded: MAX_RECORDED_COSTS, duplicates: 0 });
    expect(await totalOf('base')).toMatchObject({ spent_usd: MAX_RECORDED_COSTS / 2, calls: MAX_RECORDED_COSTS });
  });

  // A bad request is refused whole: the good record with a call_id most carry leaves no spend and no receipt.
  const GOOD = { model: 'm-1', cost_usd: 1, tokens_in: 1, tokens_out: 1, call_id: 'run:good:0' };
  it.each([
    ['no records', { records: [] }],
    [
      `more than ${MAX_RECORDED_COSTS} records`,
      { records: Array.from({ length: MAX_RECORDED_COSTS + 1 }, () => GOOD) },
    ],
    ['a negative cost', { records: [GOOD, { ...GOOD, call_id: 'run:bad:0', cost_usd: -1 }] }],
    ['fractional tokens', { records: [GOOD, { ...GOOD, call_id: 'run:bad:0', tokens_in: 0.5 }] }],
    ['a record without a model', { records: [GOOD, { cost_usd: 1, tokens_in: 1, tokens_out: 1 }] }],
    ['an unknown member in a record', { records: [GOOD, { ...GOOD, call_id: 'run:bad:0', colour: 'red' }] }],
    ['an unknown member in the body', { records: [GOOD], colour: 'red' }],
    [
      'a record naming its identity',
      { records: [{ ...GOOD, identity: { tenant: 'x', user: 'u', session: 's', run: 'r' } }] },
    ],
  ])('refuses a request with %s as invalid_request and records nothing', async (_label, body) => {
    await given([{ name: 'base' }]);
    const outcome = await h.outcome(RECORD_COSTS, { identity: run, ...body }, caller);
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(await spendOf()).toEqual([]);
    expect(await recordCosts([GOOD])).toEqual({ recorded: 1, duplicates: 0 });
  });

  it("refuses records of another tenant than the caller's with scope_mismatch, recording nothing for either", async () => {
    await given([{ name: 'base' }]);
    const victim = identityOf(uniqueTenant(), []);
    const outcome = await h.outcome(RECORD_COSTS, { identity: runOf(victim), records: RECORDS }, caller);
    expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
    expect(await spendOf(victim)).toEqual([]);
    expect(await spendOf()).toEqual([]);
    // Nor were the call_ids taken: the victim's own records count.
    expect(await recordCosts(RECORDS, victim, runOf(victim))).toEqual({ recorded: 3, duplicates: 0 });
  });
});
