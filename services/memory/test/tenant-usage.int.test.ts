import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, caller, startMemoryHarness, uniqueTenant } from './support/harness.ts';
import type { MemoryHarness } from './support/harness.ts';

/** `_memory.tenant_usage`: the size of a tenant's memory by tier, behind agents.memory. */
describe('_memory.tenant_usage', () => {
  let h: MemoryHarness;

  beforeAll(async () => {
    h = await startMemoryHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  it("counts the items and bytes of every tier of the tenant's memory", async () => {
    const tenant = uniqueTenant();
    const alice = caller(tenant, 'alice', 's1', ADMIN);
    const bob = caller(tenant, 'bob', 's2', ADMIN);
    await h.call(alice, 'memory.put', { identity: {}, tier: 'tenant', key: 't', value: 'abc' });
    await h.call(alice, 'memory.put', { identity: {}, tier: 'user', key: 'u', value: 1 });
    await h.call(bob, 'memory.put', { identity: {}, tier: 'session', key: 's', value: [1, 2] });
    const usage = (await h.call(alice, '_memory.tenant_usage', { tenant })) as {
      item_count: number;
      size_bytes: number;
      health: string;
      tiers: { tier: string; item_count: number; size_bytes: number }[];
    };
    expect(usage.item_count).toBe(3);
    expect(usage.tiers).toEqual([
      { tier: 'tenant', item_count: 1, size_bytes: 5 },
      { tier: 'user', item_count: 1, size_bytes: 1 },
      { tier: 'session', item_count: 1, size_bytes: 5 },
    ]);
    expect(usage.size_bytes).toBe(11);
    expect(typeof usage.health).toBe('string');
  });

  it("refuses another tenant's memory without the admin claim", async () => {
    const outcome = await h.outcome(caller(uniqueTenant(), 'alice', 's1', []), '_memory.tenant_usage', {
      tenant: uniqueTenant(),
    });
    expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
  });
});
