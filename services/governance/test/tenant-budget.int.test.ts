import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './support/harness.ts';
import { identityOf, startHarness, uniqueTenant } from './support/harness.ts';

/** `_governance.tenant_budget`: what governs a tenant's runs, behind agents.governance. */
describe('_governance.tenant_budget', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  it("answers the posture's default tier, the budgets and the tenant's overrides", async () => {
    const tenant = uniqueTenant();
    const admin = identityOf(tenant, ['admin'], 'admin');
    await h.call('governance.set_tenant_overrides', { identity: {}, overrides: { model: 'm-budget' } }, admin);
    const posture = (await h.call('governance.posture', { identity: {} }, identityOf(tenant))) as {
      default_tier: string;
      budgets: unknown[];
    };
    const reply = await h.call('_governance.tenant_budget', { tenant }, identityOf(tenant));
    expect(reply).toMatchObject({
      tier: posture.default_tier,
      budgets: posture.budgets,
      overrides: { model: 'm-budget' },
    });
    expect(Array.isArray((reply as { spend: unknown }).spend)).toBe(true);
  });

  it("refuses another tenant's budget without the admin claim", async () => {
    const outcome = await h.outcome(
      '_governance.tenant_budget',
      { tenant: uniqueTenant() },
      identityOf(uniqueTenant()),
    );
    expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
  });
});
