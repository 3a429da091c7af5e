import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, caller, startMemoryHarness, uniqueTenant } from './support/harness.ts';
import type { MemoryHarness } from './support/harness.ts';

// After the erasure cascade reached memory (`_memory.erase_session`), nothing
// is written under that session again: memory.put on the session tier is
// refused 410 `session_erased`, as start is (issue 32, item 3).

describe('memory of an erased session', () => {
  let h: MemoryHarness;

  beforeAll(async () => {
    h = await startMemoryHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  async function erased(tenant: string) {
    const admin = caller(tenant, 'alice', 's1', ADMIN);
    await h.call(admin, '_memory.erase_session', { tenant, user: 'alice', session: 's1' });
    return admin;
  }

  it('refuses memory.put on the session tier of an erased session with 410 session_erased and stores nothing', async () => {
    const tenant = uniqueTenant();
    const admin = await erased(tenant);
    const outcome = await h.outcome(admin, 'memory.put', { identity: {}, tier: 'session', key: 'k', value: 1 });
    expect(outcome).toMatchObject({ ok: false, code: 'session_erased' });
    await expect(h.outcome(admin, 'memory.get', { identity: {}, tier: 'session', key: 'k' })).resolves.toMatchObject({
      code: 'not_found',
    });
    expect(await h.events({ tenant, type: 'memory.item_put' })).toEqual([]);
  });

  it('refuses the session tier of an erased session even when the item was written before the erasure', async () => {
    const tenant = uniqueTenant();
    const admin = caller(tenant, 'alice', 's1', ADMIN);
    await h.call(admin, 'memory.put', { identity: {}, tier: 'session', key: 'k', value: 1 });
    await erased(tenant);
    const outcome = await h.outcome(admin, 'memory.put', { identity: {}, tier: 'session', key: 'k', value: 2 });
    expect(outcome).toMatchObject({ ok: false, code: 'session_erased' });
    await expect(h.outcome(admin, 'memory.get', { identity: {}, tier: 'session', key: 'k' })).resolves.toMatchObject({
      code: 'not_found',
    });
  });

  it('still writes the user and tenant tiers from an erased session, and the session tier of another session', async () => {
    const tenant = uniqueTenant();
    const admin = await erased(tenant);
    await expect(h.call(admin, 'memory.put', { identity: {}, tier: 'user', key: 'u', value: 1 })).resolves.toBeTruthy();
    await expect(
      h.call(admin, 'memory.put', { identity: {}, tier: 'tenant', key: 't', value: 1 }),
    ).resolves.toBeTruthy();
    const other = caller(tenant, 'alice', 's2', ADMIN);
    await expect(
      h.call(other, 'memory.put', { identity: {}, tier: 'session', key: 's', value: 1 }),
    ).resolves.toBeTruthy();
  });
});
