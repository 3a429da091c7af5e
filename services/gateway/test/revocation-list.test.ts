import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '@ars/telemetry';
import { RevocationList } from '../src/auth/revocation-list.ts';
import type { Revocation } from '../src/ports.ts';
import { FakeRevocationKv } from './support/fake-kv.ts';

const logger = createLogger({ name: 'revocation-list-test', level: 'silent' });
const FUTURE = '2999-01-01T00:00:00.000Z';

function revocation(overrides: Partial<Revocation> = {}): Revocation {
  return {
    reason: 'rotated',
    revoked_at: '2024-01-01T00:00:00.000Z',
    expires_at: FUTURE,
    tenant: 't1',
    user: 'u1',
    rotation_id: 'r1',
    replaced_by: 'new-jti',
    ...overrides,
  };
}

const lists: RevocationList[] = [];

function start(kv?: FakeRevocationKv, now?: () => number): RevocationList {
  const list = new RevocationList({ logger, retryMs: 5, ...(kv === undefined ? {} : { kv }), ...(now ? { now } : {}) });
  list.start();
  lists.push(list);
  return list;
}

afterEach(async () => {
  await Promise.all(lists.splice(0).map((list) => list.stop()));
});

describe('RevocationList', () => {
  it('knows the revocations the bucket held when it started, once the watch replayed them', async () => {
    const kv = new FakeRevocationKv();
    kv.values.set('fp.aa', JSON.stringify(revocation()));
    kv.values.set('jti.bb', JSON.stringify(revocation()));
    const list = start(kv);
    await vi.waitFor(() => expect(list.caughtUp).toBe(true));
    await expect(list.find(['fp.zz', 'jti.bb'])).resolves.toMatchObject({ reason: 'rotated' });
    expect(kv.gets).toBe(0);
  });

  it('answers an unknown token from memory once caught up, without asking the bucket', async () => {
    const kv = new FakeRevocationKv();
    const list = start(kv);
    await vi.waitFor(() => expect(list.caughtUp).toBe(true));
    await expect(list.find(['fp.cc'])).resolves.toBeUndefined();
    expect(kv.gets).toBe(0);
  });

  it('asks the bucket directly while the watch has not caught up', async () => {
    const kv = new FakeRevocationKv();
    kv.values.set('fp.aa', JSON.stringify(revocation()));
    kv.hold = true;
    const list = start(kv);
    await expect(list.find(['fp.aa'])).resolves.toMatchObject({ tenant: 't1' });
    await expect(list.find(['fp.other'])).resolves.toBeUndefined();
    expect(kv.gets).toBeGreaterThanOrEqual(1);
    expect(list.caughtUp).toBe(false);
  });

  it('fails closed with 503 unavailable when it cannot ask the bucket before catching up', async () => {
    const kv = new FakeRevocationKv();
    kv.values.set('fp.aa', JSON.stringify(revocation()));
    kv.hold = true;
    kv.failGets = true;
    const list = start(kv);
    await expect(list.find(['fp.bb'])).rejects.toMatchObject({ code: 'unavailable', status: 503 });
  });

  it('learns a revocation written after it caught up, as the watch delivers it', async () => {
    const kv = new FakeRevocationKv();
    const list = start(kv);
    await vi.waitFor(() => expect(list.caughtUp).toBe(true));
    kv.put('fp.new', JSON.stringify(revocation()));
    await vi.waitFor(async () => expect(await list.find(['fp.new'])).toBeDefined());
  });

  it('forgets a key the bucket deletes', async () => {
    const kv = new FakeRevocationKv();
    kv.values.set('fp.aa', JSON.stringify(revocation()));
    const list = start(kv);
    await vi.waitFor(() => expect(list.caughtUp).toBe(true));
    kv.delete('fp.aa');
    await vi.waitFor(async () => expect(await list.find(['fp.aa'])).toBeUndefined());
  });

  it('ignores a revocation whose token has expired anyway', async () => {
    const kv = new FakeRevocationKv();
    kv.values.set('fp.old', JSON.stringify(revocation({ expires_at: '2000-01-01T00:00:00.000Z' })));
    const list = start(kv);
    await vi.waitFor(() => expect(list.caughtUp).toBe(true));
    await expect(list.find(['fp.old'])).resolves.toBeUndefined();
  });

  it('treats an unreadable entry under a token key as a revocation (fail closed)', async () => {
    const kv = new FakeRevocationKv();
    kv.values.set('fp.bad', '{not json');
    const list = start(kv);
    await vi.waitFor(() => expect(list.caughtUp).toBe(true));
    await expect(list.find(['fp.bad'])).resolves.toMatchObject({ reason: 'unreadable' });
  });

  it('knows a revocation added by this replica at once', async () => {
    const list = start();
    list.add(['fp.mine', 'jti.mine'], revocation());
    await expect(list.find(['jti.mine'])).resolves.toMatchObject({ replaced_by: 'new-jti' });
  });

  it('calls a listener once when one of its keys is revoked, and not after it unsubscribed', async () => {
    const kv = new FakeRevocationKv();
    const list = start(kv);
    await vi.waitFor(() => expect(list.caughtUp).toBe(true));
    const fired = vi.fn();
    const ignored = vi.fn();
    list.onRevoked(['fp.a', 'jti.a'], fired);
    const off = list.onRevoked(['fp.b'], ignored);
    off();
    kv.put('jti.a', JSON.stringify(revocation()));
    list.add(['fp.a'], revocation());
    kv.put('fp.b', JSON.stringify(revocation()));
    await vi.waitFor(() => expect(fired).toHaveBeenCalledTimes(1));
    expect(ignored).not.toHaveBeenCalled();
  });

  it('resolves awaitDelivered once the watch brought every key back', async () => {
    const kv = new FakeRevocationKv();
    const list = start(kv);
    await vi.waitFor(() => expect(list.caughtUp).toBe(true));
    const delivered = list.awaitDelivered(['fp.x', 'jti.x'], 5_000);
    kv.put('fp.x', JSON.stringify(revocation()));
    kv.put('jti.x', JSON.stringify(revocation()));
    await expect(delivered).resolves.toBe(true);
  });

  it('gives up awaitDelivered after its timeout, and at once without a bucket', async () => {
    const kv = new FakeRevocationKv();
    const list = start(kv);
    await expect(list.awaitDelivered(['fp.never'], 20)).resolves.toBe(false);
    await expect(start().awaitDelivered(['fp.never'], 5_000)).resolves.toBe(false);
  });

  it('reopens a failed watch and asks the bucket until the new one caught up', async () => {
    const kv = new FakeRevocationKv();
    kv.values.set('fp.aa', JSON.stringify(revocation()));
    const list = start(kv);
    await vi.waitFor(() => expect(list.caughtUp).toBe(true));
    kv.hold = true;
    kv.breakWatches();
    await vi.waitFor(() => expect(list.caughtUp).toBe(false));
    kv.values.set('fp.while', JSON.stringify(revocation()));
    await expect(list.find(['fp.while'])).resolves.toBeDefined();
    await vi.waitFor(() => expect(kv.watches.length).toBe(1));
    kv.release();
    await vi.waitFor(() => expect(list.caughtUp).toBe(true));
  });
});
