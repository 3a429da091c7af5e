import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GovernancePostureResponse, GovernanceSetPostureResponse, LLMPostureResponse } from '@ars/contracts';
import type { Harness } from './support/harness.ts';
import { identityOf, runOf, startHarness, uniqueTenant } from './support/harness.ts';

const TIERS = [
  {
    name: 'std',
    budget: { ceiling: 10, currency: 'USD', period: 'month' },
    max_tokens: 1000,
    rate_limit: { capacity: 5, refill_tokens: 1, refill_every_ms: 1000 },
    failover: [
      { name: 'primary', kind: 'openai', base_url: 'http://127.0.0.1:1/v1', model: 'gpt-a' },
      { name: 'backup', kind: 'openai', model: 'gpt-b' },
      { name: 'scripted', kind: 'scripted' },
    ],
  },
  {
    name: 'gold',
    budget: { ceiling: 50, currency: 'EUR', period: 'day' },
    max_tokens_policy: 'refuse',
    max_tokens: 10,
  },
];

function keysOf(payload: Record<string, unknown>): string[] {
  return Object.keys(payload).sort();
}

describe('governance posture before any set_posture', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  it('answers the built-in default tier with no spend', async () => {
    const tenant = uniqueTenant();
    const posture = GovernancePostureResponse.parse(
      await h.call('governance.posture', { identity: {} }, identityOf(tenant)),
    );
    expect(posture).toMatchObject({
      tenant,
      default_tier: 'default',
      tiers: [{ name: 'default', max_tokens_policy: 'clip' }],
      budgets: [],
      overrides: {},
    });
    const llm = LLMPostureResponse.parse(await h.call('llm.posture', { identity: {} }, identityOf(tenant)));
    expect(llm).toMatchObject({ tenant, providers: [], failover_order: [] });
  });
});

describe('governance posture', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { GOVERNANCE_CURRENCY_RATES: 'EUR=0.5' } });
  });
  afterAll(async () => h?.stop());

  const setPosture = (tenant: string, tiers: unknown = TIERS, default_tier = 'std') =>
    h.call('governance.set_posture', { identity: {}, default_tier, tiers }, identityOf(tenant, ['admin'], 'admin'));

  it('sets the tiers and publishes governance.posture_set with before and after', async () => {
    const tenant = uniqueTenant();
    await setPosture(tenant, [{ name: 'only' }], 'only');
    const result = GovernanceSetPostureResponse.parse(await setPosture(tenant));
    expect(result.default_tier).toBe('std');
    expect(result.tiers.map((t) => t.name)).toEqual(['std', 'gold']);
    expect(result.tiers[0]).toMatchObject({
      max_tokens_policy: 'clip',
      rate_limit: { unit: 'calls', on_limit: 'wait' },
    });
    const event = await h.waitForEvent(
      (e) => e.type === 'governance.posture_set' && e.tenant === tenant && e.payload.DefaultTierAfter === 'std',
      'governance.posture_set',
    );
    expect(keysOf(event.payload)).toEqual(
      [
        'Actor',
        'DefaultTierBefore',
        'DefaultTierAfter',
        'TierCountBefore',
        'TierCountAfter',
        'TiersBefore',
        'TiersAfter',
        'OccurredAt',
      ].sort(),
    );
    expect(event.payload).toMatchObject({
      Actor: { tenant, user: 'admin', session: 's-1', run: '' },
      DefaultTierBefore: 'only',
      DefaultTierAfter: 'std',
      TierCountBefore: 1,
      TierCountAfter: 2,
      TiersBefore: ['only'],
      TiersAfter: ['std', 'gold'],
      OccurredAt: result.updated_at,
    });
  });

  it('reports real spend, bucket levels, overrides, key fingerprints and the failover chain', async () => {
    const tenant = uniqueTenant();
    const admin = identityOf(tenant, ['admin'], 'admin');
    await setPosture(tenant);
    const run = runOf(admin);
    await h.call(
      '_governance.record_cost',
      { identity: run, model: 'gpt-a', cost_usd: 1.25, tokens_in: 10, tokens_out: 20 },
      admin,
    );
    await h.call(
      '_governance.record_cost',
      { identity: run, model: 'gpt-a', tier: 'gold', cost_usd: 3, tokens_in: 1, tokens_out: 2 },
      admin,
    );
    await h.call('_governance.admit_llm_call', { identity: run, model: 'gpt-a', requested_max_tokens: 100 }, admin);
    await h.call(
      'governance.set_tenant_overrides',
      { identity: {}, overrides: { model: 'gpt-b', temperature: 0.2 } },
      admin,
    );
    const rotated = (await h.call(
      'governance.rotate_key',
      { identity: {}, provider: 'primary', key: 'sk-posture-0123456789abcdef' },
      admin,
    )) as { fingerprint: string };

    const posture = GovernancePostureResponse.parse(
      await h.call('governance.posture', { identity: {} }, identityOf(tenant)),
    );
    expect(posture.default_tier).toBe('std');
    expect(posture.budgets).toEqual([
      expect.objectContaining({
        tier: 'std',
        spent: 1.25,
        ceiling: 10,
        currency: 'USD',
        period: 'month',
        spent_usd: 1.25,
        calls: 1,
      }),
      expect.objectContaining({ tier: 'gold', spent: 1.5, ceiling: 50, currency: 'EUR', period: 'day', spent_usd: 3 }),
    ]);
    expect(posture.overrides).toEqual({ model: 'gpt-b', temperature: 0.2 });
    expect(posture.rate_limits).toEqual([
      expect.objectContaining({
        tier: 'std',
        model: 'gpt-a',
        capacity: 5,
        available: 4,
        refill_tokens: 1,
        refill_every_ms: 1000,
      }),
    ]);
    expect(posture.provider_keys).toEqual([
      { provider: 'primary', fingerprint: rotated.fingerprint, rotated_at: expect.any(String) },
    ]);
    expect(posture.failover_order).toEqual(['primary', 'backup', 'scripted']);
    expect(posture.spend).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          tier: 'std',
          period: 'total',
          spent_usd: 1.25,
          tokens_in: 10,
          tokens_out: 20,
          calls: 1,
        }),
      ]),
    );

    h.clock.advance(2_000);
    const later = GovernancePostureResponse.parse(
      await h.call('governance.posture', { identity: {} }, identityOf(tenant)),
    );
    expect(later.rate_limits).toEqual([expect.objectContaining({ available: 5 })]);
  });

  it('lists the providers with kind, models, key fingerprint, health and failover order', async () => {
    const tenant = uniqueTenant();
    const admin = identityOf(tenant, ['admin'], 'admin');
    await setPosture(tenant);
    const rotated = (await h.call(
      'governance.rotate_key',
      { identity: {}, provider: 'backup', key: 'sk-llm-posture-key-000000' },
      admin,
    )) as { fingerprint: string };
    await h.call(
      '_governance.failover',
      { identity: runOf(admin), from_provider: 'primary', hop_index: 1, accumulated_cost: 0, reason: 'HTTP 503' },
      admin,
    );
    const llm = LLMPostureResponse.parse(await h.call('llm.posture', { identity: {} }, identityOf(tenant)));
    expect(llm.failover_order).toEqual(['primary', 'backup', 'scripted']);
    expect(llm.default_provider).toBe('primary');
    expect(llm.providers).toEqual([
      expect.objectContaining({ name: 'primary', kind: 'openai', models: ['gpt-a'], healthy: false, failures: 1 }),
      expect.objectContaining({
        name: 'backup',
        kind: 'openai',
        models: ['gpt-b'],
        healthy: true,
        key_fingerprint: rotated.fingerprint,
      }),
      expect.objectContaining({ name: 'scripted', kind: 'scripted', models: [], healthy: true }),
    ]);
    expect(llm.providers[0]).not.toHaveProperty('key_fingerprint');

    h.clock.advance(301_000);
    const later = LLMPostureResponse.parse(await h.call('llm.posture', { identity: {} }, identityOf(tenant)));
    expect(later.providers[0]).toMatchObject({ name: 'primary', healthy: true, failures: 1 });
  });

  it('reads its own tenant with a scopeless token and publishes no read audit', async () => {
    const tenant = uniqueTenant();
    await h.call('governance.posture', { identity: { tenant } }, identityOf(tenant));
    await h.call('llm.posture', { identity: {} }, identityOf(tenant));
    expect(h.events.filter((e) => e.type.endsWith('posture_read_admin') && e.tenant === tenant)).toEqual([]);
  });

  it.each(['governance.posture', 'llm.posture'])('refuses %s of another tenant without a claim', async (method) => {
    const outcome = await h.outcome(method, { identity: { tenant: uniqueTenant() } }, identityOf(uniqueTenant()));
    expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
  });

  it('lets console:fleet read another tenant and publishes governance.posture_read_admin', async () => {
    const reader = identityOf(uniqueTenant(), ['console:fleet'], 'fleet');
    const target = uniqueTenant();
    const posture = GovernancePostureResponse.parse(
      await h.call('governance.posture', { identity: { tenant: target } }, reader),
    );
    expect(posture.tenant).toBe(target);
    const event = await h.waitForEvent(
      (e) => e.type === 'governance.posture_read_admin' && e.payload.RequestedTenant === target,
      'governance.posture_read_admin',
    );
    expect(keysOf(event.payload)).toEqual(['Actor', 'OccurredAt', 'RequestedTenant']);
    expect(event.payload.Actor).toEqual({ tenant: reader.tenant, user: 'fleet', session: 's-1', run: '' });
    expect(event.tenant).toBe(reader.tenant);
  });

  it('lets admin read another tenant and publishes llm.posture_read_admin', async () => {
    const reader = identityOf(uniqueTenant(), ['admin'], 'root');
    const target = uniqueTenant();
    const llm = LLMPostureResponse.parse(await h.call('llm.posture', { identity: { tenant: target } }, reader));
    expect(llm.tenant).toBe(target);
    const event = await h.waitForEvent(
      (e) => e.type === 'llm.posture_read_admin' && e.payload.RequestedTenant === target,
      'llm.posture_read_admin',
    );
    expect(keysOf(event.payload)).toEqual(['Actor', 'RequestedTenant']);
    expect(event.payload.Actor).toEqual({ tenant: reader.tenant, user: 'root', session: 's-1', run: '' });
  });

  it('refuses a body user other than the caller', async () => {
    const tenant = uniqueTenant();
    const outcome = await h.outcome(
      'governance.posture',
      { identity: { user: 'someone' } },
      identityOf(tenant, ['admin']),
    );
    expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
  });

  it.each([
    ['a scopeless token', []],
    ['console:fleet', ['console:fleet']],
  ])('refuses set_posture to %s', async (_label, scopes) => {
    const outcome = await h.outcome(
      'governance.set_posture',
      { identity: {}, default_tier: 'std', tiers: [{ name: 'std' }] },
      identityOf(uniqueTenant(), scopes),
    );
    expect(outcome).toMatchObject({ ok: false, code: 'identity_scope_required' });
  });

  it.each([
    ['a default tier that is not a tier', { default_tier: 'gold', tiers: [{ name: 'std' }] }, /default_tier/],
    [
      'an unknown member',
      { default_tier: 'std', tiers: [{ name: 'std', colour: 'red' }] },
      /tiers\.0\.colour: unknown member/,
    ],
    [
      'a budget currency without a rate',
      { default_tier: 'std', tiers: [{ name: 'std', budget: { ceiling: 1, currency: 'JPY' } }] },
      /JPY has no rate/,
    ],
    [
      'a provider twice in a chain',
      {
        default_tier: 'std',
        tiers: [
          {
            name: 'std',
            failover: [
              { name: 'a', kind: 'openai' },
              { name: 'a', kind: 'openai' },
            ],
          },
        ],
      },
      /failover: provider names must be unique/,
    ],
    [
      'a negative rate-limit capacity',
      {
        default_tier: 'std',
        tiers: [{ name: 'std', rate_limit: { capacity: -1, refill_tokens: 1, refill_every_ms: 1 } }],
      },
      /capacity/,
    ],
  ])('refuses set_posture with %s', async (_label, body, message) => {
    const outcome = await h.outcome(
      'governance.set_posture',
      { identity: {}, ...body },
      identityOf(uniqueTenant(), ['admin']),
    );
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(outcome.ok ? '' : outcome.message).toMatch(message);
  });

  it('refuses a posture read with an unknown member', async () => {
    const outcome = await h.outcome('governance.posture', { identity: {}, tenant: 'x' }, identityOf(uniqueTenant()));
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
  });
});
