import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '@ars/store';
import { createRepositories } from '../src/store/repositories.ts';
import { RECEIPT_PRUNE_BATCH } from '../src/store/spend.repository.ts';
import type { Harness } from './support/harness.ts';
import { identityOf, runOf, startHarness, uniqueTenant } from './support/harness.ts';

/**
 * Cost receipts (the `call_id`s that make `_governance.record_cost`
 * idempotent) are kept for GOVERNANCE_COST_RECEIPT_RETENTION_HOURS, not
 * forever: three a run would otherwise grow the store without bound.
 */

const HOUR = 3_600_000;
const AMOUNTS = { cost_usd: 0.5, tokens_in: 1, tokens_out: 1 };

describe('cost receipts: pruning in the repository', () => {
  it.each(['sqlite', 'nedb'] as const)(
    'deletes receipts older than the cutoff, all of them, and no other (%s)',
    async (engine) => {
      const dataDir = await mkdtemp(join(tmpdir(), 'ars-receipts-'));
      const store = await openStore({ dataDir, database: 'governance', engine });
      try {
        const { spend } = await createRepositories(store);
        const t0 = Date.parse('2026-11-25T00:00:00.000Z');
        const old = RECEIPT_PRUNE_BATCH + 5; // more than one batch
        for (let i = 0; i < old; i += 1) await spend.add(`t${i % 3}`, 'default', AMOUNTS, t0 + i, `old-${i}`);
        await spend.add('t0', 'default', AMOUNTS, t0 + 2 * HOUR, 'fresh');

        expect(await spend.pruneReceipts(t0 + HOUR)).toBe(old);
        expect(await spend.pruneReceipts(t0 + HOUR)).toBe(0);
        // The fresh receipt still makes its call a duplicate; a pruned one counts again.
        expect((await spend.add('t0', 'default', AMOUNTS, t0 + 2 * HOUR, 'fresh')).duplicate).toBe(true);
        expect((await spend.add('t0', 'default', AMOUNTS, t0 + 2 * HOUR, 'old-0')).duplicate).toBe(false);
      } finally {
        await store.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );
});

describe('cost receipts: the service prunes them on its own', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({
      env: { GOVERNANCE_COST_RECEIPT_RETENTION_HOURS: '1', GOVERNANCE_COST_RECEIPT_PRUNE_INTERVAL_SECONDS: '1' },
    });
  });
  afterAll(async () => h?.stop());

  it('forgets a call_id once its receipt is older than the retention, and keeps the younger ones', async () => {
    const caller = identityOf(uniqueTenant());
    const run = runOf(caller);
    const record = async (callId: string) =>
      (
        (await h.call(
          '_governance.record_cost',
          { identity: run, model: 'm-1', cost_usd: 0.01, tokens_in: 1, tokens_out: 1, call_id: callId },
          caller,
        )) as { duplicate: boolean }
      ).duplicate;

    expect(await record('run:1:0')).toBe(false);
    h.clock.advance(HOUR / 2);
    expect(await record('run:2:0')).toBe(false);
    expect(await record('run:1:0')).toBe(true);
    h.clock.advance((3 * HOUR) / 4); // run:1:0 is 75 minutes old now, run:2:0 45

    const deadline = Date.now() + 10_000;
    while (await record('run:1:0')) {
      expect(Date.now()).toBeLessThan(deadline);
      await sleep(100);
    }
    expect(await record('run:2:0')).toBe(true);
    expect(h.logs.some((line) => line.includes('expired cost receipts deleted'))).toBe(true);
  });
});
