import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
import type { Store } from '@ars/store';
import { createLeaseRepository } from '../../src/store/lease.repository.ts';

describe('lease repository (sqlite, two executors on one data directory)', () => {
  let dataDir: string;
  let stores: Store[];

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ars-leases-'));
    // Two connections to one file, as two run-executor processes sharing DATA_DIR have.
    stores = await Promise.all([1, 2].map(() => openStore({ dataDir, database: 'run-executor', engine: 'sqlite' })));
  });

  afterEach(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('gives each of 100 runs claimed by both executors at once to exactly one of them', async () => {
    const [a, b] = stores.map((store) => createLeaseRepository(store)) as [
      ReturnType<typeof createLeaseRepository>,
      ReturnType<typeof createLeaseRepository>,
    ];
    const ids = Array.from({ length: 100 }, (_, i) => `run-${i}`);
    const now = Date.now();
    const outcomes = await Promise.all(
      ids.map(async (id) => {
        const [byA, byB] = await Promise.all([a.claim(id, 'a', now, now + 30_000), b.claim(id, 'b', now, now + 30_000)]);
        return { id, byA, byB };
      }),
    );
    for (const { byA, byB } of outcomes) {
      expect([byA.ok, byB.ok].filter(Boolean)).toHaveLength(1);
      if (!byA.ok) expect(byA.holder).toBe('b');
      if (!byB.ok) expect(byB.holder).toBe('a');
    }
    // Each executor's extension covers exactly the runs it won.
    const wonByA = outcomes.filter((o) => o.byA.ok).map((o) => o.id);
    expect(await a.extend(ids, 'a', now + 60_000)).toEqual(ids.filter((id) => !wonByA.includes(id)));
  });
});
