import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
import { ADMIN, caller, startMemoryHarness, uniqueTenant } from './support/harness.ts';
import type { MemoryHarness } from './support/harness.ts';

/** The identity of service-level memory events. */
const SYSTEM = { tenant: '_system', user: 'memory', session: '_memory' };

describe('memory recovery and health', () => {
  let h: MemoryHarness;

  beforeAll(async () => {
    h = await startMemoryHarness({ fileStore: true });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('drops corrupt records on load, reports each, flips health to degraded and back', async () => {
    const tenant = uniqueTenant();
    const admin = caller(tenant, 'root', 's', ADMIN);
    await h.call(admin, 'memory.put', { identity: {}, tier: 'user', key: 'kept', value: 'fine' });

    await h.restart(async () => {
      const store = await openStore({ dataDir: join(h.dataDir, 'memory'), database: 'ars_memory' });
      const items = store.collection<{ _id: string } & Record<string, unknown>>('memory_items');
      await items.insertOne({ _id: 'user:broken-json', tenant, tier: 'user', user: 'root', session: '', key: 'x' });
      await items.insertOne({ _id: 'not-an-address', tenant: 42 });
      await store.close();
    });

    const dropped = await h.events({ ...SYSTEM, type: 'memory.recovery_dropped' });
    expect(dropped.map((e) => e.payload)).toEqual([
      { Reason: 'memory record not-an-address dropped: tenant: Invalid input: expected string, received number' },
      { Reason: expect.stringMatching(/^memory record user:broken-json dropped: /) },
    ]);
    const changes = await h.events({ ...SYSTEM, type: 'memory.health_changed' });
    expect(changes.map((e) => e.payload)).toEqual([
      {
        PriorHealth: 'healthy',
        NewHealth: 'degraded',
        Reason: 'dropped 2 corrupt memory records since the last check',
      },
    ]);

    const health = await h.call(admin, 'memory.health', { identity: {} });
    expect(health).toMatchObject({ health: 'healthy', item_count: 1, size_bytes: Buffer.byteLength('"fine"') });
    const after = await h.events({ ...SYSTEM, type: 'memory.health_changed' });
    expect(after.map((e) => e.payload)).toEqual([
      {
        PriorHealth: 'healthy',
        NewHealth: 'degraded',
        Reason: 'dropped 2 corrupt memory records since the last check',
      },
      { PriorHealth: 'degraded', NewHealth: 'healthy', Reason: expect.stringMatching(/^store answered in \d+ ms$/) },
    ]);
    await expect(h.call(admin, 'memory.get', { identity: {}, tier: 'user', key: 'kept' })).resolves.toMatchObject({
      item: { value: 'fine' },
    });
  });

  it('keeps memory across a restart', async () => {
    const tenant = uniqueTenant();
    const admin = caller(tenant, 'root', 's', ADMIN);
    await h.call(admin, 'memory.put', { identity: {}, tier: 'tenant', key: 'durable', value: 1 });
    await h.restart();
    await expect(h.call(admin, 'memory.get', { identity: {}, tier: 'tenant', key: 'durable' })).resolves.toMatchObject({
      item: { value: 1, version: 1 },
    });
  });
});
