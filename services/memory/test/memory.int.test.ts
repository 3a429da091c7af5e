import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, FLEET, NONE, caller, startMemoryHarness, uniqueTenant } from './support/harness.ts';
import type { MemoryHarness } from './support/harness.ts';

type Item = {
  key: string;
  tier: string;
  value: unknown;
  tenant: string;
  user?: string;
  session?: string;
  version: number;
};

describe('memory methods', () => {
  let h: MemoryHarness;

  beforeAll(async () => {
    h = await startMemoryHarness({ env: { MEMORY_MAX_ITEM_BYTES: '1024' } });
  });

  afterAll(async () => {
    await h?.stop();
  });

  describe('memory.put', () => {
    it('writes an item as admin and publishes memory.item_put with Operation and Key', async () => {
      const tenant = uniqueTenant();
      const admin = caller(tenant, 'root', 's1', ADMIN);
      const result = (await h.call(admin, 'memory.put', {
        identity: {},
        tier: 'user',
        key: 'prefs.tone',
        value: { tone: 'brief' },
      })) as { item: Item & Record<string, unknown> };
      expect(result.item).toEqual({
        key: 'prefs.tone',
        tier: 'user',
        value: { tone: 'brief' },
        tenant,
        user: 'root',
        size_bytes: Buffer.byteLength('{"tone":"brief"}'),
        version: 1,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const events = await h.events({ tenant, type: 'memory.item_put' });
      expect(events.map((e) => [e.tenant, e.user, e.session, e.payload])).toEqual([
        [tenant, 'root', 's1', { Operation: 'memory.put', Key: 'prefs.tone' }],
      ]);
    });

    it('increments the version on every put', async () => {
      const admin = caller(uniqueTenant(), 'root', 's', ADMIN);
      await h.call(admin, 'memory.put', { identity: {}, tier: 'tenant', key: 'k', value: 1 });
      const second = (await h.call(admin, 'memory.put', { identity: {}, tier: 'tenant', key: 'k', value: 2 })) as {
        item: Item;
      };
      expect(second.item).toMatchObject({ value: 2, version: 2 });
    });

    it.each([
      ['no scopes', NONE],
      ['console:fleet', FLEET],
    ])('refuses a put with %s: 403 identity_scope_required and memory.identity_rejected', async (_name, scopes) => {
      const tenant = uniqueTenant();
      const me = caller(tenant, 'u', 's', scopes);
      const outcome = await h.outcome(me, 'memory.put', { identity: {}, tier: 'user', key: 'k', value: 1 });
      expect(outcome).toEqual({
        ok: false,
        code: 'identity_scope_required',
        message: 'memory.put needs the admin claim',
      });
      await expect(h.outcome(me, 'memory.get', { identity: {}, tier: 'user', key: 'k' })).resolves.toMatchObject({
        code: 'not_found',
      });
      const events = await h.events({ tenant, type: 'memory.identity_rejected' });
      expect(events.map((e) => [e.user, e.session, e.payload])).toEqual([
        ['u', 's', { Operation: 'memory.put', Reason: 'memory.put needs the admin claim' }],
      ]);
    });

    it('refuses a body identity naming another user with identity_required and memory.identity_rejected', async () => {
      const tenant = uniqueTenant();
      const admin = caller(tenant, 'root', 's', ADMIN);
      const outcome = await h.outcome(admin, 'memory.put', {
        identity: { user: 'someone-else' },
        tier: 'user',
        key: 'k',
        value: 1,
      });
      expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
      const events = await h.events({ tenant, type: 'memory.identity_rejected' });
      expect(events).toHaveLength(1);
      expect(events[0]!.payload).toEqual({ Operation: 'memory.put', Reason: expect.stringContaining('user') });
    });

    it('compares and sets with if_version', async () => {
      const admin = caller(uniqueTenant(), 'root', 's', ADMIN);
      const put = (value: number, ifVersion: number) =>
        h.outcome(admin, 'memory.put', { identity: {}, tier: 'user', key: 'cas', value, if_version: ifVersion });
      await expect(put(1, 0)).resolves.toMatchObject({ ok: true, result: { item: { version: 1 } } });
      await expect(put(2, 0)).resolves.toMatchObject({ ok: false, code: 'conflict' });
      await expect(put(2, 5)).resolves.toMatchObject({ ok: false, code: 'conflict' });
      await expect(put(2, 1)).resolves.toMatchObject({ ok: true, result: { item: { version: 2, value: 2 } } });
    });

    it('refuses a value larger than MEMORY_MAX_ITEM_BYTES with payload_too_large', async () => {
      const admin = caller(uniqueTenant(), 'root', 's', ADMIN);
      const outcome = await h.outcome(admin, 'memory.put', {
        identity: {},
        tier: 'user',
        key: 'big',
        value: 'x'.repeat(1100),
      });
      expect(outcome).toMatchObject({ ok: false, code: 'payload_too_large', message: expect.stringContaining('1024') });
    });

    it('keeps values whose member names no document store allows', async () => {
      const admin = caller(uniqueTenant(), 'root', 's', ADMIN);
      const value = { $where: 1, 'a.b': { '': [null, true] } };
      await h.call(admin, 'memory.put', { identity: {}, tier: 'user', key: 'odd', value });
      await expect(h.call(admin, 'memory.get', { identity: {}, tier: 'user', key: 'odd' })).resolves.toMatchObject({
        item: { value },
      });
    });
  });

  describe('memory.get', () => {
    it('reads tenant memory from any user of the tenant and caller memory only by its owner', async () => {
      const tenant = uniqueTenant();
      const admin = caller(tenant, 'alice', 's1', ADMIN);
      await h.call(admin, 'memory.put', { identity: {}, tier: 'tenant', key: 'policy', value: 'be nice' });
      await h.call(admin, 'memory.put', { identity: {}, tier: 'user', key: 'mine', value: 'alice only' });
      await h.call(admin, 'memory.put', { identity: {}, tier: 'session', key: 'topic', value: 'bikes' });
      const bob = caller(tenant, 'bob', 's1');
      const aliceOtherSession = caller(tenant, 'alice', 's2');
      const stranger = caller(uniqueTenant(), 'alice', 's1');
      const get = (who: typeof bob, tier: string, key: string) =>
        h.outcome(who, 'memory.get', { identity: {}, tier, key });

      await expect(get(bob, 'tenant', 'policy')).resolves.toMatchObject({
        ok: true,
        result: { item: { value: 'be nice' } },
      });
      await expect(get(bob, 'user', 'mine')).resolves.toMatchObject({ code: 'not_found' });
      await expect(get(aliceOtherSession, 'user', 'mine')).resolves.toMatchObject({ ok: true });
      await expect(get(aliceOtherSession, 'session', 'topic')).resolves.toMatchObject({ code: 'not_found' });
      await expect(get(caller(tenant, 'alice', 's1'), 'session', 'topic')).resolves.toMatchObject({
        ok: true,
        result: { item: { session: 's1', user: 'alice' } },
      });
      await expect(get(stranger, 'tenant', 'policy')).resolves.toMatchObject({ code: 'not_found' });
    });
  });

  describe('memory.delete', () => {
    it('deletes as admin, publishes memory.item_deleted once, and answers deleted false after', async () => {
      const tenant = uniqueTenant();
      const admin = caller(tenant, 'root', 's', ADMIN);
      await h.call(admin, 'memory.put', { identity: {}, tier: 'tenant', key: 'gone', value: true });
      await expect(h.call(admin, 'memory.delete', { identity: {}, tier: 'tenant', key: 'gone' })).resolves.toEqual({
        tier: 'tenant',
        key: 'gone',
        deleted: true,
      });
      await expect(
        h.call(admin, 'memory.delete', { identity: {}, tier: 'tenant', key: 'gone' }),
      ).resolves.toMatchObject({
        deleted: false,
      });
      const events = await h.events({ tenant, type: 'memory.item_deleted' });
      expect(events.map((e) => e.payload)).toEqual([{ Operation: 'memory.delete', Key: 'gone' }]);
    });

    it('refuses a delete without admin and publishes memory.identity_rejected', async () => {
      const tenant = uniqueTenant();
      await h.call(caller(tenant, 'root', 's', ADMIN), 'memory.put', {
        identity: {},
        tier: 'tenant',
        key: 'k',
        value: 1,
      });
      const me = caller(tenant, 'u', 's', FLEET);
      await expect(h.outcome(me, 'memory.delete', { identity: {}, tier: 'tenant', key: 'k' })).resolves.toMatchObject({
        code: 'identity_scope_required',
      });
      await expect(h.call(me, 'memory.get', { identity: {}, tier: 'tenant', key: 'k' })).resolves.toBeDefined();
      const events = await h.events({ tenant, type: 'memory.identity_rejected' });
      expect(events.map((e) => e.payload)).toEqual([
        { Operation: 'memory.delete', Reason: 'memory.delete needs the admin claim' },
      ]);
    });
  });

  describe('memory.list', () => {
    let A: string;
    let B: string;

    beforeAll(async () => {
      A = uniqueTenant('A');
      B = uniqueTenant('B');
      const put = (tenant: string, user: string, session: string, tier: string, key: string) =>
        h.call(caller(tenant, user, session, ADMIN), 'memory.put', { identity: {}, tier, key, value: key });
      await put(A, 'alice', 's1', 'tenant', 'a-tenant');
      await put(A, 'alice', 's1', 'user', 'a-alice');
      await put(A, 'alice', 's1', 'session', 'a-alice-s1');
      await put(A, 'alice', 's2', 'session', 'a-alice-s2');
      await put(A, 'bob', 's1', 'user', 'a-bob');
      await put(B, 'carol', 's1', 'tenant', 'b-tenant');
      await put(B, 'carol', 's1', 'user', 'b-carol');
    });

    const keys = (result: unknown) => (result as { items: Item[] }).items.map((i) => i.key);

    it('lists the caller’s own scope by key: tenant tier, its user tier, its session tier', async () => {
      const result = await h.call(caller(A, 'alice', 's1'), 'memory.list', { identity: {} });
      expect(keys(result)).toEqual(['a-alice', 'a-alice-s1', 'a-tenant']);
    });

    it('narrows by tier and by key prefix', async () => {
      const me = caller(A, 'alice', 's1');
      await expect(h.call(me, 'memory.list', { identity: {}, filter: { tier: 'user' } }).then(keys)).resolves.toEqual([
        'a-alice',
      ]);
      await expect(
        h.call(me, 'memory.list', { identity: {}, filter: { prefix: 'a-alice' } }).then(keys),
      ).resolves.toEqual(['a-alice', 'a-alice-s1']);
    });

    it('pages with a cursor', async () => {
      const me = caller(A, 'alice', 's1');
      const first = (await h.call(me, 'memory.list', { identity: {}, limit: 2 })) as {
        items: Item[];
        next_cursor: string;
      };
      const second = (await h.call(me, 'memory.list', { identity: {}, limit: 2, cursor: first.next_cursor })) as {
        items: Item[];
        next_cursor?: string;
      };
      expect([...keys(first), ...keys(second)]).toEqual(['a-alice', 'a-alice-s1', 'a-tenant']);
      expect(second.next_cursor).toBeUndefined();
    });

    it('accepts the caller’s own tenant in filter.tenant_ids without a claim', async () => {
      const result = await h.call(caller(A, 'alice', 's1'), 'memory.list', {
        identity: {},
        filter: { tenant_ids: [A] },
      });
      expect(keys(result)).toEqual(['a-alice', 'a-alice-s1', 'a-tenant']);
    });

    it('refuses another tenant without a claim: 403 scope_mismatch and memory.identity_rejected', async () => {
      const me = caller(A, 'alice', 's9');
      await expect(h.outcome(me, 'memory.list', { identity: {}, filter: { tenant_ids: [B] } })).resolves.toMatchObject({
        ok: false,
        code: 'scope_mismatch',
      });
      const events = await h.events({ tenant: A, session: 's9', type: 'memory.identity_rejected' });
      expect(events.map((e) => e.payload)).toEqual([
        { Operation: 'memory.list', Reason: "filter.tenant_ids beyond the caller's own needs admin or console:fleet" },
      ]);
    });

    it.each([
      ['console:fleet', FLEET],
      ['admin', ADMIN],
    ])('fans in across the named tenants with %s', async (_name, scopes) => {
      const me = caller(A, 'alice', 's1', scopes);
      const both = await h.call(me, 'memory.list', { identity: {}, filter: { tenant_ids: [A, B] } });
      expect(keys(both)).toEqual(['a-alice', 'a-alice-s1', 'a-alice-s2', 'a-bob', 'a-tenant', 'b-carol', 'b-tenant']);
      const other = await h.call(me, 'memory.list', { identity: {}, filter: { tenant_ids: [B] } });
      expect(keys(other)).toEqual(['b-carol', 'b-tenant']);
    });

    it('lists only the caller’s own scope for a claim holder who names no tenant', async () => {
      const result = await h.call(caller(A, 'alice', 's1', FLEET), 'memory.list', { identity: {} });
      expect(keys(result)).toEqual(['a-alice', 'a-alice-s1', 'a-tenant']);
    });
  });

  describe('memory.health', () => {
    it('reports healthy with the caller’s real item count and bytes', async () => {
      const tenant = uniqueTenant();
      const admin = caller(tenant, 'root', 's', ADMIN);
      await h.call(admin, 'memory.put', { identity: {}, tier: 'tenant', key: 'a', value: 'xyz' });
      await h.call(admin, 'memory.put', { identity: {}, tier: 'user', key: 'b', value: [1, 2] });
      const result = await h.call(caller(tenant, 'root', 's'), 'memory.health', { identity: {} });
      expect(result).toEqual({
        health: 'healthy',
        reason: expect.stringMatching(/^store answered in \d+ ms$/),
        item_count: 2,
        size_bytes: Buffer.byteLength('"xyz"') + Buffer.byteLength('[1,2]'),
        checked_at: expect.any(String),
      });
    });
  });
});
