import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_CHANGED_SUBJECT } from '@ars/bus';
import { GovernanceAdmissionPostureReply, GovernanceSetPostureResponse } from '@ars/contracts';
import type { Harness } from './support/harness.ts';
import { identityOf, runOf, startHarness, uniqueTenant } from './support/harness.ts';

/**
 * `_governance.admission_posture`: the engine admits calls of an open tier
 * itself, so a tier reported open must be one whose admission could neither
 * refuse, clip, delay nor report a call; and the engine keeps the answer
 * until `ars.cfg.changed`, so every posture write must announce one.
 */

const ADMISSION_POSTURE = '_governance.admission_posture';

describe('_governance.admission_posture before any set_posture', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  it('answers the built-in default tier, open, and no updated_at', async () => {
    const reply = await h.call(ADMISSION_POSTURE, {}, identityOf(uniqueTenant()));
    expect(GovernanceAdmissionPostureReply.parse(reply)).toEqual({
      default_tier: 'default',
      tiers: [{ name: 'default', open: true }],
    });
    expect(reply).not.toHaveProperty('updated_at');
  });

  it('refuses a body with an unknown member', async () => {
    const outcome = await h.outcome(ADMISSION_POSTURE, { tenant: 'x' }, identityOf(uniqueTenant()));
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
  });
});

describe('_governance.admission_posture', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  const setPosture = async (default_tier: string, tiers: unknown[]) =>
    GovernanceSetPostureResponse.parse(
      await h.call(
        'governance.set_posture',
        { identity: {}, default_tier, tiers },
        identityOf(uniqueTenant(), ['admin'], 'admin'),
      ),
    );
  // The posture is runtime-wide: any caller, of any tenant and without scopes, reads the same answer.
  const admissionPosture = async () =>
    GovernanceAdmissionPostureReply.parse(await h.call(ADMISSION_POSTURE, {}, identityOf(uniqueTenant())));

  it('reports open only a tier with no models, budget, max_tokens or rate limit', async () => {
    const set = await setPosture('capped', [
      { name: 'listed', models: ['m-1'] },
      { name: 'budgeted', budget: { ceiling: 1, currency: 'USD', period: 'month' } },
      { name: 'capped', max_tokens: 64 },
      { name: 'limited', rate_limit: { capacity: 5, refill_tokens: 1, refill_every_ms: 1000 } },
      // A failover chain changes which provider answers, never whether a call is admitted.
      { name: 'free', failover: [{ name: 'p1', kind: 'openai', model: 'm-1' }] },
    ]);
    expect(await admissionPosture()).toEqual({
      default_tier: 'capped',
      tiers: [
        { name: 'listed', open: false },
        { name: 'budgeted', open: false },
        { name: 'capped', open: false },
        { name: 'limited', open: false },
        { name: 'free', open: true },
      ],
      updated_at: set.updated_at,
    });
  });

  it('reports an open tier open beside a constrained default tier', async () => {
    h.clock.advance(1_000); // a later posture, a later updated_at
    const set = await setPosture('metered', [
      { name: 'metered', budget: { ceiling: 10, currency: 'USD', period: 'day' } },
      { name: 'free' },
    ]);
    expect(await admissionPosture()).toEqual({
      default_tier: 'metered',
      tiers: [
        { name: 'metered', open: false },
        { name: 'free', open: true },
      ],
      updated_at: set.updated_at,
    });
  });

  it('announces ars.cfg.changed on set_posture before its caller has the reply', async () => {
    const order: string[] = [];
    const notices: string[] = [];
    // The rpc client the harness calls through and this subscription share the harness's connection, and governance
    // publishes the notice and then the reply on its own one: nats-server delivers one connection's messages to
    // another in order, and the client dispatches them in arrival order (the notice's callback at once, the
    // reply's awaiter a microtask later), so a notice published before the reply is pushed before 'reply'.
    const sub = h.service.bus.nc.subscribe(CONFIG_CHANGED_SUBJECT, {
      callback: (error, msg) => {
        if (error !== null) return;
        order.push('notice');
        notices.push(new TextDecoder().decode(msg.data));
      },
    });
    await h.service.bus.nc.flush(); // the subscription is the server's before anything is published
    try {
      await setPosture('free', [{ name: 'free' }]);
      order.push('reply');
      // One write of the posture, one notice, naming the announcing service.
      expect(order).toEqual(['notice', 'reply']);
      expect(notices).toEqual(['governance']);
    } finally {
      sub.unsubscribe();
    }
  });

  it('announces nothing on a posture read or on recorded costs (no configuration changed)', async () => {
    const order: string[] = [];
    const sub = h.service.bus.nc.subscribe(CONFIG_CHANGED_SUBJECT, {
      callback: (error) => void (error === null && order.push('notice')),
    });
    await h.service.bus.nc.flush();
    try {
      const caller = identityOf(uniqueTenant());
      await admissionPosture();
      await h.call(
        '_governance.record_costs',
        { identity: runOf(caller), records: [{ model: 'm-1', cost_usd: 0.5, tokens_in: 1, tokens_out: 1 }] },
        caller,
      );
      order.push('reply');
      // A notice is delivered before the reply it precedes (see above): none came before the last reply, none was sent.
      expect(order).toEqual(['reply']);
    } finally {
      sub.unsubscribe();
    }
  });
});
