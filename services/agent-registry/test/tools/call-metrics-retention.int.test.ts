import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolCallRecord } from '@ars/contracts';
import { openStore } from '@ars/store';
import type { EmbeddedEngine, Store } from '@ars/store';
import { createLogger } from '@ars/telemetry';
import { BATCH_RECEIPT_TTL_MS, createCallMetricsRepository } from '../../src/tools/call-metrics.repository.ts';
import { createToolsModule } from '../../src/tools/index.ts';
import { waitFor } from '../mcp/support.ts';

/** Old minute buckets and batch receipts are deleted, on both embedded engines. */

const DAY_MS = 86_400_000;
const call = (at: number, tool = 'echo'): ToolCallRecord => ({
  tool,
  transport: 'builtin',
  source: 'builtin',
  outcome: 'completed',
  approval_requested: false,
  attempts: 1,
  duration_ms: 2,
  bytes_in: 1,
  bytes_out: 1,
  artifacts_offloaded: 0,
  at: new Date(at).toISOString(),
});

describe.each<EmbeddedEngine>(['sqlite', 'nedb'])('tool call counter retention (%s)', (engine) => {
  let dir: string;
  let store: Store;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-tool-metrics-retention-'));
    store = await openStore({ dataDir: dir, database: 'retention', engine, inMemory: engine === 'nedb' });
  });

  afterEach(async () => {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('deletes the minute buckets that started before the cutoff and keeps the rest', async () => {
    const metrics = await createCallMetricsRepository(store);
    const now = Date.now();
    await metrics.record('t', [
      call(now - 40 * DAY_MS),
      call(now - 31 * DAY_MS, 'wait'),
      call(now - 29 * DAY_MS),
      call(now),
    ]);
    await metrics.record('u', [call(now - 45 * DAY_MS)]);
    const deleted = await metrics.prune(now - 30 * DAY_MS, now);
    expect(deleted).toEqual({ buckets: 3, receipts: 0 });
    const kept = await metrics.buckets('t', {});
    expect(kept.map((b) => b.minute).sort()).toHaveLength(2);
    expect(kept.every((b) => b.minute >= now - 30 * DAY_MS - 60_000)).toBe(true);
    expect(await metrics.buckets('u', {})).toEqual([]);
  });

  it('forgets a batch id a day after it was counted, and counts it again then', async () => {
    const metrics = await createCallMetricsRepository(store);
    const now = Date.now();
    expect(await metrics.record('t', [call(now)], 'b-1')).toEqual({ recorded: 1, duplicate: false });
    expect(await metrics.prune(0, now + BATCH_RECEIPT_TTL_MS - 60_000)).toEqual({ buckets: 0, receipts: 0 });
    expect(await metrics.record('t', [call(now)], 'b-1')).toEqual({ recorded: 0, duplicate: true });
    expect(await metrics.prune(0, now + BATCH_RECEIPT_TTL_MS + 60_000)).toEqual({ buckets: 0, receipts: 1 });
    expect(await metrics.record('t', [call(now)], 'b-1')).toEqual({ recorded: 1, duplicate: false });
  });

  it('prunes when the tool catalogue starts (TOOL_METRICS_RETENTION_DAYS)', async () => {
    const metrics = await createCallMetricsRepository(store);
    const now = Date.now();
    await metrics.record('t', [call(now - 10 * DAY_MS), call(now)]);
    const host = {
      listTenantMcpTools: async () => ({ agents: [] }),
      listAgentMcpTools: async () => ({ agent_id: 'default', tools: [], unavailable_servers: [] }),
    };
    const logger = createLogger({ name: 'retention-test', level: 'silent' });
    const tools = await createToolsModule({ store, host, metrics, retentionDays: 7, logger });
    try {
      await waitFor(async () => (await metrics.buckets('t', {})).length === 1);
    } finally {
      await tools.stop();
    }
  });
});
