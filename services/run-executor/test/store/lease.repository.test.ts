import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
import type { Store } from '@ars/store';
import { createLeaseManager } from '../../src/engine/lease.ts';
import { createLeaseRepository, RUN_LEASES_COLLECTION } from '../../src/store/lease.repository.ts';
import type { LeaseRepository } from '../../src/store/lease.repository.ts';

describe('lease repository (embedded, in memory)', () => {
  let store: Store;
  let leases: LeaseRepository;

  beforeEach(async () => {
    store = await openStore({ dataDir: '.', database: 'leases_test', inMemory: true });
    leases = createLeaseRepository(store);
  });

  afterEach(async () => {
    await store.close();
  });

  it('gives a free lease to the first claimant and names it to the next until it expires', async () => {
    expect(await leases.claim('t1', 'a', 1_000, 2_000)).toEqual({ ok: true });
    expect(await leases.claim('t1', 'b', 1_500, 2_500)).toEqual({ ok: false, holder: 'a', expiresAt: 2_000 });
    // Expired: b takes it over, and a is the one refused now.
    expect(await leases.claim('t1', 'b', 2_000, 3_000)).toEqual({ ok: true });
    expect(await leases.claim('t1', 'a', 2_100, 3_100)).toEqual({ ok: false, holder: 'b', expiresAt: 3_000 });
  });

  it('lets the holder claim its own lease again, extending it', async () => {
    await leases.claim('t1', 'a', 1_000, 2_000);
    expect(await leases.claim('t1', 'a', 1_100, 5_000)).toEqual({ ok: true });
    expect(await leases.claim('t1', 'b', 4_000, 6_000)).toMatchObject({ ok: false, expiresAt: 5_000 });
  });

  it('keeps one holder when many claim the same run at once', async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => leases.claim('t1', `e${i}`, 1_000, 2_000)));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    const winner = outcomes.findIndex((o) => o.ok);
    for (const outcome of outcomes.filter((o) => !o.ok)) expect(outcome).toMatchObject({ holder: `e${winner}` });
  });

  it("extends the owner's leases in one write and reports those another executor holds or that are gone", async () => {
    for (const id of ['t1', 't2', 't3']) await leases.claim(id, 'a', 1_000, 2_000);
    expect(await leases.extend(['t1', 't2', 't3'], 'a', 4_000)).toEqual([]);
    expect(await leases.claim('t1', 'b', 3_000, 6_000)).toMatchObject({ ok: false, expiresAt: 4_000 });

    // t2 expired and was taken over by b; t3 was taken over and released.
    expect(await leases.claim('t2', 'b', 4_000, 9_000)).toEqual({ ok: true });
    expect(await leases.claim('t3', 'b', 4_000, 9_000)).toEqual({ ok: true });
    await leases.release('t3', 'b');
    expect(await leases.extend(['t1', 't2', 't3'], 'a', 7_000)).toEqual(['t2', 't3']);
    expect(await leases.extend([], 'a', 7_000)).toEqual([]);
  });

  it("releases only the owner's lease, and keeps nothing of a released one", async () => {
    await leases.claim('t1', 'a', 1_000, 2_000);
    await leases.release('t1', 'b');
    expect(await leases.claim('t1', 'b', 1_100, 2_100)).toMatchObject({ ok: false, holder: 'a' });
    await leases.release('t1', 'a');
    expect(await store.collection(RUN_LEASES_COLLECTION).countDocuments()).toBe(0);
    expect(await leases.claim('t1', 'b', 1_100, 2_100)).toEqual({ ok: true });
  });
});

describe('lease manager', () => {
  let store: Store;
  let clock: number;
  const now = (): number => clock;

  beforeEach(async () => {
    store = await openStore({ dataDir: '.', database: 'lease_manager_test', inMemory: true });
    clock = 10_000;
  });

  afterEach(async () => {
    await store.close();
  });

  it('lets one executor hold a run, and another take it over only once the lease expired', async () => {
    const repository = createLeaseRepository(store);
    const lost: string[] = [];
    const a = createLeaseManager(repository, { owner: 'a', ttlMs: 400, now, onLost: (id) => lost.push(id) });
    const b = createLeaseManager(repository, { owner: 'b', ttlMs: 400, now, onLost: () => {} });
    expect((await a.acquire('task-1')).ok).toBe(true);
    clock += 100;
    expect(await b.acquire('task-1')).toEqual({ ok: false, holder: 'a', retryInMs: 300 });

    await a.refreshAll();
    expect(lost).toEqual([]);
    clock += 399;
    expect((await b.acquire('task-1')).ok).toBe(false);
    clock += 1;
    const taken = await b.acquire('task-1');
    expect(taken.ok).toBe(true);
    await a.refreshAll();
    expect(lost).toEqual(['task-1']);
    // Reported once: a no longer holds it.
    await a.refreshAll();
    expect(lost).toEqual(['task-1']);

    if (taken.ok) await b.release(taken.lease);
    expect((await a.acquire('task-1')).ok).toBe(true);
  });

  it('does not report a lease released while its refresh was under way', async () => {
    const stored = createLeaseRepository(store);
    let releaseDone!: () => void;
    const released = new Promise<void>((resolve) => (releaseDone = resolve));
    // The refresh's write reaches the store only after the release: it finds the lease gone.
    const repository: LeaseRepository = {
      ...stored,
      extend: async (ids, owner, expiresAt) => {
        await released;
        return stored.extend(ids, owner, expiresAt);
      },
    };
    const lost: string[] = [];
    const a = createLeaseManager(repository, { owner: 'a', ttlMs: 1_000, now, onLost: (id) => lost.push(id) });
    const acquired = await a.acquire('task-1');
    if (!acquired.ok) throw new Error('not acquired');
    const refresh = a.refreshAll();
    await a.release(acquired.lease);
    expect(await stored.extend(['task-1'], 'a', 5_000)).toEqual(['task-1']);
    releaseDone();
    await refresh;
    expect(lost).toEqual([]);
  });

  it('keeps its leases when the refresh write fails, and says so', async () => {
    const repository: LeaseRepository = {
      ...createLeaseRepository(store),
      extend: () => Promise.reject(new Error('store unavailable')),
    };
    const lost: string[] = [];
    const a = createLeaseManager(repository, { owner: 'a', ttlMs: 1_000, now, onLost: (id) => lost.push(id) });
    await a.acquire('task-1');
    await expect(a.refreshAll()).rejects.toThrow('store unavailable');
    expect(lost).toEqual([]);
  });

  it('gives up a lease it could not extend for two thirds of its lifetime, before another executor may take it', async () => {
    const stored = createLeaseRepository(store);
    let failing = false;
    const repository: LeaseRepository = {
      ...stored,
      extend: (ids, owner, expiresAt) =>
        failing ? Promise.reject(new Error('store unavailable')) : stored.extend(ids, owner, expiresAt),
    };
    const lost: string[] = [];
    const a = createLeaseManager(repository, { owner: 'a', ttlMs: 900, now, onLost: (id) => lost.push(id) });
    await a.acquire('task-1');
    clock += 300;
    await a.refreshAll(); // Set to expire at 10,300 + 900.
    failing = true;
    clock += 300;
    await expect(a.refreshAll()).rejects.toThrow('store unavailable');
    expect(lost).toEqual([]);
    clock += 299;
    await expect(a.refreshAll()).rejects.toThrow('store unavailable');
    expect(lost).toEqual([]);
    clock += 1; // 600 ms, two thirds of 900, since the expiry was last set.
    await expect(a.refreshAll()).rejects.toThrow('store unavailable');
    expect(lost).toEqual(['task-1']);
    // Given up while the store still names it the holder: nobody else could have run it yet.
    const b = createLeaseManager(stored, { owner: 'b', ttlMs: 900, now, onLost: () => {} });
    expect(await b.acquire('task-1')).toMatchObject({ ok: false, holder: 'a' });
    failing = false;
    await a.refreshAll();
    expect(lost).toEqual(['task-1']);
  });
  it('holds a lease for five sixths of its lifetime since the expiry was last set, then gives it up on its own clock', async () => {
    const lost: string[] = [];
    const a = createLeaseManager(createLeaseRepository(store), {
      owner: 'a',
      ttlMs: 600,
      now,
      onLost: (id) => lost.push(id),
    });
    const acquired = await a.acquire('task-1');
    if (!acquired.ok) throw new Error('not acquired');
    clock += 499;
    expect(a.holds(acquired.lease)).toBe(true);
    clock += 1; // 500 ms, five sixths of 600, and no heartbeat since: the process stood still.
    expect(a.holds(acquired.lease)).toBe(false);
    expect(lost).toEqual(['task-1']);
    // Given up for good: a later heartbeat neither extends it nor reports it again.
    await a.refreshAll();
    expect(a.holds(acquired.lease)).toBe(false);
    expect(lost).toEqual(['task-1']);
  });

  it('counts a lease as held again from each extension, and not once released', async () => {
    const a = createLeaseManager(createLeaseRepository(store), { owner: 'a', ttlMs: 600, now, onLost: () => {} });
    const acquired = await a.acquire('task-1');
    if (!acquired.ok) throw new Error('not acquired');
    clock += 400;
    await a.refreshAll();
    clock += 400;
    expect(a.holds(acquired.lease)).toBe(true);
    await a.release(acquired.lease);
    expect(a.holds(acquired.lease)).toBe(false);
  });
});
