import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
import type { Collection, CollectionOptions, Store, StoreDocument } from '@ars/store';
import { createRepositories } from '../src/store/repositories.ts';
import type { SpendRepository, SpendWindow } from '../src/store/spend.repository.ts';

/**
 * Spend per (tenant, tier) keeps the current window of each period (day, month, total) in one
 * document: a call is one increment of the three; a call in a later day or month moves that window
 * on; a (tenant, tier) spent in before this layout is seeded from the old per-window documents.
 */

const CALL = { cost_usd: 0.25, tokens_in: 10, tokens_out: 4 };
const at = (iso: string) => Date.parse(iso);

function figures(windows: readonly SpendWindow[]) {
  return Object.fromEntries(
    windows.map((w) => [w.period, { start: w.period_start, usd: w.spent_usd, calls: w.calls }]),
  );
}

describe.each(['sqlite', 'nedb'] as const)('spend windows (%s)', (engine) => {
  let dataDir: string;
  let store: Store;
  let spend: SpendRepository;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ars-spend-'));
    store = await openStore({ dataDir, database: 'governance', engine });
    ({ spend } = await createRepositories(store));
  });
  afterEach(async () => {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('adds each call to the day, month and total windows it falls in', async () => {
    await spend.add('t', 'default', CALL, at('2026-11-27T08:00:00Z'), 'c1');
    const { windows, duplicate } = await spend.add('t', 'default', CALL, at('2026-11-27T09:00:00Z'), 'c2');
    expect(duplicate).toBe(false);
    expect(figures(windows)).toEqual({
      day: { start: '2026-11-27T00:00:00.000Z', usd: 0.5, calls: 2 },
      month: { start: '2026-11-01T00:00:00.000Z', usd: 0.5, calls: 2 },
      total: { start: '1970-01-01T00:00:00.000Z', usd: 0.5, calls: 2 },
    });
    const day = await spend.current('t', 'default', 'day', at('2026-11-27T23:59:59Z'));
    expect(day).toMatchObject({ tier: 'default', spent_usd: 0.5, tokens_in: 20, tokens_out: 8, calls: 2 });
    // Another tier and another tenant are apart.
    expect((await spend.current('t', 'premium', 'total', at('2026-11-27T10:00:00Z'))).calls).toBe(0);
    expect((await spend.current('u', 'default', 'total', at('2026-11-27T10:00:00Z'))).calls).toBe(0);
  });

  it('starts a new day afresh and keeps counting the month and the total; a new month restarts both', async () => {
    await spend.add('t', 'default', CALL, at('2026-11-27T23:00:00Z'));
    await spend.add('t', 'default', CALL, at('2026-11-28T01:00:00Z'));
    expect(figures((await spend.add('t', 'default', CALL, at('2026-11-28T02:00:00Z'))).windows)).toEqual({
      day: { start: '2026-11-28T00:00:00.000Z', usd: 0.5, calls: 2 },
      month: { start: '2026-11-01T00:00:00.000Z', usd: 0.75, calls: 3 },
      total: { start: '1970-01-01T00:00:00.000Z', usd: 0.75, calls: 3 },
    });
    expect((await spend.current('t', 'default', 'day', at('2026-11-28T12:00:00Z'))).calls).toBe(2);

    const december = (await spend.add('t', 'default', CALL, at('2026-12-01T00:00:01Z'))).windows;
    expect(figures(december)).toEqual({
      day: { start: '2026-12-01T00:00:00.000Z', usd: 0.25, calls: 1 },
      month: { start: '2026-12-01T00:00:00.000Z', usd: 0.25, calls: 1 },
      total: { start: '1970-01-01T00:00:00.000Z', usd: 1, calls: 4 },
    });
    // A window read for a time whose window is no longer held: nothing is known of it.
    expect((await spend.current('t', 'default', 'month', at('2026-12-15T00:00:00Z'))).spent_usd).toBe(0.25);
    expect((await spend.current('t', 'default', 'day', at('2026-12-02T00:00:00Z'))).calls).toBe(0);
  });

  it('counts a call timed before the window another call moved on to in that window, losing none', async () => {
    await spend.add('t', 'default', CALL, at('2026-11-28T00:00:05Z'));
    // A replica whose clock is behind records a call of the previous day.
    const late = (await spend.add('t', 'default', CALL, at('2026-11-27T23:59:58Z'))).windows;
    expect(figures(late)).toEqual({
      day: { start: '2026-11-28T00:00:00.000Z', usd: 0.5, calls: 2 },
      month: { start: '2026-11-01T00:00:00.000Z', usd: 0.5, calls: 2 },
      total: { start: '1970-01-01T00:00:00.000Z', usd: 0.5, calls: 2 },
    });
  });

  it('loses no call among concurrent ones, across a day boundary', async () => {
    const times = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? at('2026-11-27T23:59:59Z') : at('2026-11-28T00:00:01Z'),
    );
    await Promise.all(times.map((t, i) => spend.add('t', 'default', CALL, t, `call-${i}`)));
    const total = await spend.current('t', 'default', 'total', at('2026-11-28T00:00:02Z'));
    const month = await spend.current('t', 'default', 'month', at('2026-11-28T00:00:02Z'));
    const day = await spend.current('t', 'default', 'day', at('2026-11-28T00:00:02Z'));
    expect(total).toMatchObject({ calls: 40, spent_usd: 10, tokens_in: 400, tokens_out: 160 });
    expect(month).toMatchObject({ calls: 40, spent_usd: 10 });
    // Every call of the new day is in its window; calls of the old day recorded after it began are too.
    expect(day.calls).toBeGreaterThanOrEqual(20);
    expect(day.calls).toBeLessThanOrEqual(40);
  });

  it('answers a repeated call_id with the windows as they are, adding nothing', async () => {
    await spend.add('t', 'default', CALL, at('2026-11-27T08:00:00Z'), 'same');
    const again = await spend.add('t', 'default', CALL, at('2026-11-27T08:00:01Z'), 'same');
    expect(again.duplicate).toBe(true);
    expect(again.windows.map((w) => w.calls)).toEqual([1, 1, 1]);
  });

  it('lists every tier of a tenant with its current windows', async () => {
    await spend.add('t', 'premium', CALL, at('2026-11-27T08:00:00Z'));
    await spend.add('t', 'default', CALL, at('2026-11-26T08:00:00Z'));
    await spend.add('other', 'default', CALL, at('2026-11-27T08:00:00Z'));
    const listed = await spend.currentForTenant('t', at('2026-11-27T09:00:00Z'));
    expect(listed.map((w) => `${w.tier}/${w.period} ${w.calls}`)).toEqual([
      // The default tier's day window is the 26th's: not current, not listed.
      'default/month 1',
      'default/total 1',
      'premium/day 1',
      'premium/month 1',
      'premium/total 1',
    ]);
  });

  it('reads and continues the spend kept in the layout before, one document per window', async () => {
    const legacy = store.collection('spend');
    const old = (period: string, start: string, usd: number, calls: number) => ({
      _id: JSON.stringify(['t', 'default', period, start]),
      tenant: 't',
      tier: 'default',
      period,
      period_start: start,
      spent_usd: usd,
      tokens_in: calls,
      tokens_out: calls,
      calls,
      updated_at: '2026-11-27T07:00:00.000Z',
    });
    await legacy.insertOne(old('day', '2026-11-26T00:00:00.000Z', 9, 9)); // an earlier day: not current
    await legacy.insertOne(old('day', '2026-11-27T00:00:00.000Z', 1, 2));
    await legacy.insertOne(old('month', '2026-11-01T00:00:00.000Z', 3, 5));
    await legacy.insertOne(old('total', '1970-01-01T00:00:00.000Z', 7, 11));

    const now = at('2026-11-27T08:00:00Z');
    expect((await spend.current('t', 'default', 'month', now)).spent_usd).toBe(3);
    expect((await spend.currentForTenant('t', now)).map((w) => `${w.period} ${w.spent_usd}`)).toEqual([
      'day 1',
      'month 3',
      'total 7',
    ]);

    const { windows } = await spend.add('t', 'default', CALL, now, 'first-after');
    expect(figures(windows)).toEqual({
      day: { start: '2026-11-27T00:00:00.000Z', usd: 1.25, calls: 3 },
      month: { start: '2026-11-01T00:00:00.000Z', usd: 3.25, calls: 6 },
      total: { start: '1970-01-01T00:00:00.000Z', usd: 7.25, calls: 12 },
    });
    // Listed once, from the windows document, and the old documents are no longer counted.
    expect((await spend.currentForTenant('t', now)).map((w) => `${w.period} ${w.spent_usd}`)).toEqual([
      'day 1.25',
      'month 3.25',
      'total 7.25',
    ]);
    await spend.add('t', 'default', CALL, now);
    expect((await spend.current('t', 'default', 'total', now)).spent_usd).toBe(7.5);
  });

  it('adds several calls with one write per tier, and leaves no receipt of calls a failed write did not add', async () => {
    const now = at('2026-11-27T08:00:00Z');
    const call = (tier: string, callId: string) => ({ tier, amounts: CALL, callId });
    // The second tier's write fails once: its calls are not added, and their receipts go with them.
    let failures = 1;
    const failing: Store = {
      ...store,
      kind: store.kind,
      compoundIndexes: store.compoundIndexes,
      database: store.database,
      collection: <T extends StoreDocument>(name: string, options?: CollectionOptions): Collection<T> => {
        const inner = store.collection<T>(name, options);
        if (name !== 'spend_windows') return inner;
        const findOneAndUpdate: typeof inner.findOneAndUpdate = (filter, ...rest) => {
          const tier = (JSON.parse(String((filter as { _id?: unknown })._id)) as string[])[1];
          if (tier === 'premium' && failures-- > 0) return Promise.reject(new Error('store failed'));
          return inner.findOneAndUpdate(filter, ...rest);
        };
        // The collection's methods need it as their receiver (private fields): each is bound, one replaced.
        return new Proxy(inner, {
          get: (target, prop) => {
            if (prop === 'findOneAndUpdate') return findOneAndUpdate;
            const value: unknown = Reflect.get(target, prop, target);
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          },
        });
      },
      commitSoon: () => store.commitSoon(),
      close: () => store.close(),
    };
    const { spend: flaky } = await createRepositories(failing);
    // Seeds both documents, so that the batch's writes are the increments.
    await flaky.add('t', 'default', CALL, now, 'seed-1');
    await flaky.add('t', 'premium', { ...CALL, cost_usd: 0 }, now, 'seed-2').catch(() => undefined);
    failures = 1;
    const batch = [call('default', 'a'), call('premium', 'b'), call('default', 'c')];
    await expect(flaky.addCalls('t', batch, now)).rejects.toThrow('store failed');
    // The retry adds only what the failure left out: premium's call, not default's two again.
    await expect(flaky.addCalls('t', batch, now)).resolves.toEqual({ recorded: 1, duplicates: 2 });
    expect((await spend.current('t', 'default', 'total', now)).calls).toBe(3);
    expect((await spend.current('t', 'premium', 'total', now)).calls).toBe(1);
    expect((await spend.current('t', 'premium', 'total', now)).spent_usd).toBe(0.25);
  });

  it('sums the calls of a batch per tier, as many calls as it holds', async () => {
    const now = at('2026-11-27T08:00:00Z');
    const batch = ['a', 'b', 'c'].map((callId) => ({ tier: 'default', amounts: CALL, callId }));
    await expect(spend.addCalls('t', [...batch, { tier: 'default', amounts: CALL }], now)).resolves.toEqual({
      recorded: 4,
      duplicates: 0,
    });
    expect(figures((await spend.add('t', 'default', CALL, now)).windows)).toEqual({
      day: { start: '2026-11-27T00:00:00.000Z', usd: 1.25, calls: 5 },
      month: { start: '2026-11-01T00:00:00.000Z', usd: 1.25, calls: 5 },
      total: { start: '1970-01-01T00:00:00.000Z', usd: 1.25, calls: 5 },
    });
  });
});
