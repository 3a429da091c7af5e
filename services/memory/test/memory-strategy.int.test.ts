import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, caller, startMemoryHarness, uniqueTenant } from './support/harness.ts';
import type { MemoryHarness } from './support/harness.ts';

/**
 * The caller_memory strategy with a 60-byte budget and a 40-byte block
 * maximum. Fixture blocks (`<key>: <value>`): t1 15 bytes (tenant), u1 13 and
 * u2 11 (user), s1 54 (session, over the block maximum), s2 24 (session).
 * Admission runs session, user, tenant: s2 (24), u1 (37), u2 (48), then t1
 * needs 15 with 12 left and is dropped.
 */
describe('memory strategy, prompt blocks and erasure', () => {
  let h: MemoryHarness;

  beforeAll(async () => {
    h = await startMemoryHarness({ env: { MEMORY_PROMPT_BUDGET_BYTES: '60', MEMORY_BLOCK_MAX_BYTES: '40' } });
  });

  afterAll(async () => {
    await h?.stop();
  });

  async function seed(tenant: string): Promise<void> {
    const admin = caller(tenant, 'alice', 's1', ADMIN);
    const put = (tier: string, key: string, value: unknown) =>
      h.call(admin, 'memory.put', { identity: {}, tier, key, value });
    await put('tenant', 't1', 'tenant rule');
    await put('user', 'u1', 'likes tea');
    await put('user', 'u2', { a: 1 });
    await put('session', 's1', 'x'.repeat(50));
    await put('session', 's2', 'current topic: bikes');
    // Not the caller's: another user's and another session's memory never load.
    await h.call(caller(tenant, 'bob', 's1', ADMIN), 'memory.put', { identity: {}, tier: 'user', key: 'b', value: 1 });
    await h.call(caller(tenant, 'alice', 's2', ADMIN), 'memory.put', {
      identity: {},
      tier: 'session',
      key: 'other',
      value: 1,
    });
  }

  const EXPECTED = [
    ['tenant', 't1', 'dropped', 15, 'over budget: needs 15 bytes, 12 of 60 left'],
    ['user', 'u1', 'admitted', 13, 'user tier, within the 60-byte budget'],
    ['user', 'u2', 'admitted', 11, 'user tier, within the 60-byte budget'],
    ['session', 's1', 'dropped', 54, 'block of 54 bytes exceeds the 40-byte block maximum'],
    ['session', 's2', 'admitted', 24, 'session tier, within the 60-byte budget'],
  ];

  type Entry = {
    tier: string;
    key: string;
    action: string;
    bytes: number;
    reason: string;
    strategy: string;
    task_id?: string;
  };
  const rows = (entries: Entry[]) => entries.map((e) => [e.tier, e.key, e.action, e.bytes, e.reason]);

  it('traces what the strategy would load for the caller, in prompt order, with reasons', async () => {
    const tenant = uniqueTenant();
    await seed(tenant);
    const trace = (await h.call(caller(tenant, 'alice', 's1'), 'memory.strategy_trace', { identity: {} })) as {
      items: Entry[];
    };
    expect(rows(trace.items)).toEqual(EXPECTED);
    expect(trace.items.every((e) => e.strategy === 'caller_memory' && e.task_id === undefined)).toBe(true);
  });

  it('pages the live trace with a cursor', async () => {
    const tenant = uniqueTenant();
    await seed(tenant);
    const me = caller(tenant, 'alice', 's1');
    const first = (await h.call(me, 'memory.strategy_trace', { identity: {}, limit: 3 })) as {
      items: Entry[];
      next_cursor: string;
    };
    const rest = (await h.call(me, 'memory.strategy_trace', { identity: {}, limit: 3, cursor: first.next_cursor })) as {
      items: Entry[];
      next_cursor?: string;
    };
    expect(rows([...first.items, ...rest.items])).toEqual(EXPECTED);
    expect(rest.next_cursor).toBeUndefined();
    await expect(h.outcome(me, 'memory.strategy_trace', { identity: {}, cursor: 'bogus' })).resolves.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('hands the run engine its blocks and publishes memory.caller_block_admitted per block', async () => {
    const tenant = uniqueTenant();
    await seed(tenant);
    const result = (await h.call(caller(tenant, 'alice', 's1'), '_memory.prompt_blocks', {
      tenant,
      user: 'alice',
      session: 's1',
      run: 'task-1',
    })) as Record<string, unknown>;
    expect(result).toMatchObject({
      strategy: 'caller_memory',
      budget_bytes: 60,
      used_bytes: 48,
      blocks: [
        { tier: 'user', key: 'u1', text: 'u1: likes tea', bytes: 13 },
        { tier: 'user', key: 'u2', text: 'u2: {"a":1}', bytes: 11 },
        { tier: 'session', key: 's2', text: 's2: current topic: bikes', bytes: 24 },
      ],
    });
    const events = await h.events({ tenant, type: 'memory.caller_block_admitted' });
    expect(events.map((e) => [e.user, e.session, e.run, e.payload])).toEqual([
      ['alice', 's1', 'task-1', { bytes: 13, tier: 'user', key: 'u1' }],
      ['alice', 's1', 'task-1', { bytes: 11, tier: 'user', key: 'u2' }],
      ['alice', 's1', 'task-1', { bytes: 24, tier: 'session', key: 's2' }],
    ]);
  });

  it('records the run’s trace for memory.strategy_trace with run, for its owner only', async () => {
    const tenant = uniqueTenant();
    await seed(tenant);
    const triple = { tenant, user: 'alice', session: 's1' };
    await h.call(caller(tenant, 'alice', 's1'), '_memory.prompt_blocks', { ...triple, run: 'task-2' });
    const mine = (await h.call(caller(tenant, 'alice', 's1'), 'memory.strategy_trace', {
      identity: {},
      run: 'task-2',
    })) as { items: Entry[] };
    expect(rows(mine.items)).toEqual(EXPECTED);
    expect(mine.items.every((e) => e.task_id === 'task-2')).toBe(true);
    const theirs = (await h.call(caller(tenant, 'bob', 's1'), 'memory.strategy_trace', {
      identity: {},
      run: 'task-2',
    })) as { items: Entry[] };
    expect(theirs.items).toEqual([]);
  });

  it('erases the session’s memory and traces, keeps the rest, and is idempotent', async () => {
    const tenant = uniqueTenant();
    await seed(tenant);
    const triple = { tenant, user: 'alice', session: 's1' };
    const me = caller(tenant, 'alice', 's1');
    await h.call(me, '_memory.prompt_blocks', { ...triple, run: 'task-3' });
    await expect(h.call(me, '_memory.erase_session', triple)).resolves.toEqual({
      purged: true,
      items_deleted: 2,
      traces_deleted: 5,
    });
    await expect(h.call(me, '_memory.erase_session', triple)).resolves.toEqual({
      purged: false,
      items_deleted: 0,
      traces_deleted: 0,
    });
    const listed = (await h.call(me, 'memory.list', { identity: {} })) as { items: { key: string }[] };
    expect(listed.items.map((i) => i.key)).toEqual(['t1', 'u1', 'u2']);
    const trace = (await h.call(me, 'memory.strategy_trace', { identity: {}, run: 'task-3' })) as { items: unknown[] };
    expect(trace.items).toEqual([]);
    const otherSession = (await h.call(caller(tenant, 'alice', 's2'), 'memory.list', { identity: {} })) as {
      items: { key: string }[];
    };
    expect(otherSession.items.map((i) => i.key)).toContain('other');
    expect(await h.events({ tenant, type: 'memory.item_deleted' })).toEqual([]);
  });

  describe('caller memory (the run’s memory tool)', () => {
    it('writes the caller’s own tier without admin and publishes memory.item_put', async () => {
      const tenant = uniqueTenant();
      const me = caller(tenant, 'alice', 's1');
      const written = await h.call(me, '_memory.caller_write', {
        tenant,
        user: 'alice',
        session: 's1',
        key: 'fav',
        value: 'green',
      });
      expect(written).toMatchObject({ item: { tier: 'user', key: 'fav', value: 'green', user: 'alice', version: 1 } });
      await expect(h.call(me, 'memory.get', { identity: {}, tier: 'user', key: 'fav' })).resolves.toMatchObject({
        item: { value: 'green' },
      });
      const events = await h.events({ tenant, type: 'memory.item_put' });
      expect(events.map((e) => [e.user, e.session, e.payload])).toEqual([
        ['alice', 's1', { Operation: 'caller_memory.write', Key: 'fav' }],
      ]);
    });

    it('reads the caller’s own tier first, then the tenant tier, else null', async () => {
      const tenant = uniqueTenant();
      const admin = caller(tenant, 'root', 's', ADMIN);
      await h.call(admin, 'memory.put', { identity: {}, tier: 'tenant', key: 'lang', value: 'en' });
      await h.call(admin, 'memory.put', { identity: {}, tier: 'tenant', key: 'tz', value: 'UTC' });
      const triple = { tenant, user: 'alice', session: 's1' };
      const me = caller(tenant, 'alice', 's1');
      await h.call(me, '_memory.caller_write', { ...triple, key: 'lang', value: 'fr' });
      const read = (key: string) => h.call(me, '_memory.caller_read', { ...triple, key });
      await expect(read('lang')).resolves.toMatchObject({ item: { tier: 'user', value: 'fr' } });
      await expect(read('tz')).resolves.toMatchObject({ item: { tier: 'tenant', value: 'UTC' } });
      await expect(read('none')).resolves.toEqual({ item: null });
    });
  });
});
