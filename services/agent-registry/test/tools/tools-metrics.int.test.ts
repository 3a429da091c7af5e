import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS_RECORD_CALLS, ToolContentStats, ToolMetrics } from '@ars/contracts';
import type { ToolCallRecord, VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import { binBounds, binOf } from '../../src/tools/latency-histogram.ts';
import { startToolsHarness } from './helpers/tools-harness.ts';
import type { ToolsHarness } from './helpers/tools-harness.ts';

interface MetricsEntry {
  tool: string;
  invocations: number;
  failures: number;
  invalid_args: number;
  approvals_requested: number;
  p50_ms: number;
  p99_ms: number;
}

const call = (over: Partial<ToolCallRecord> = {}): ToolCallRecord => ({
  tool: 'echo',
  transport: 'builtin',
  source: 'builtin',
  outcome: 'completed',
  approval_requested: false,
  attempts: 1,
  duration_ms: 1,
  bytes_in: 10,
  bytes_out: 100,
  artifacts_offloaded: 0,
  at: '2030-01-01T10:00:30Z',
  ...over,
});

/** True when `value` lies in the histogram bin of `exact`. */
const withinBinOf = (value: number, exact: number) => {
  const { lower, upper } = binBounds(binOf(exact));
  return value >= lower && value < upper;
};

describe('tools.metrics and tools.content_stats', () => {
  let h: ToolsHarness;

  beforeAll(async () => {
    h = await startToolsHarness('metrics');
  });

  afterAll(async () => {
    await h?.stop();
  });

  const record = (who: VerifiedIdentity, calls: ToolCallRecord[]) =>
    callInternal(h.service.rpc, TOOLS_RECORD_CALLS, who, { tenant: who.tenant, calls });
  const metrics = (who: VerifiedIdentity, body: Record<string, unknown> = {}) =>
    h.call<{ since?: string; until?: string; items: MetricsEntry[] }>('tools.metrics', body, who);

  it('computes p50 and p99 within a bin of the exact values, from calls recorded over batches and minutes', async () => {
    const who = h.caller([]);
    // 1..200 ms over four minutes and four batches: exact nearest-rank p50 = 100 ms, p99 = 198 ms.
    const durations = Array.from({ length: 200 }, (_, i) => i + 1);
    for (let batch = 0; batch < 4; batch++) {
      const slice = durations.filter((_, i) => i % 4 === batch);
      await record(
        who,
        slice.map((d) => call({ duration_ms: d, at: `2030-01-01T10:0${batch}:${String(d % 60).padStart(2, '0')}Z` })),
      );
    }
    const answer = await metrics(who, { name: 'echo' });
    expect(ToolMetrics.safeParse(answer).success).toBe(true);
    const [entry] = answer.items;
    expect(entry).toMatchObject({ tool: 'echo', invocations: 200, failures: 0, invalid_args: 0 });
    expect(withinBinOf(entry!.p50_ms, 100)).toBe(true);
    expect(withinBinOf(entry!.p99_ms, 198)).toBe(true);
  });

  it('counts failures, invalid arguments and approvals, timing only the calls that ran', async () => {
    const who = h.caller([]);
    await record(who, [
      call({ tool: 'fail', outcome: 'failed', duration_ms: 4 }),
      call({ tool: 'fail', outcome: 'policy_exhausted', duration_ms: 4 }),
      call({ tool: 'fail', outcome: 'invalid_args', duration_ms: 0 }),
      call({ tool: 'fail', outcome: 'rejected', approval_requested: true, duration_ms: 600_000 }),
      call({ tool: 'fail', approval_requested: true, duration_ms: 4 }),
    ]);
    const [entry] = (await metrics(who)).items;
    expect(entry).toMatchObject({ tool: 'fail', invocations: 5, failures: 2, invalid_args: 1, approvals_requested: 2 });
    expect(withinBinOf(entry!.p99_ms, 4)).toBe(true);
  });

  it('reads only the minutes that overlap [since, until), and echoes the window', async () => {
    const who = h.caller([]);
    await record(who, [
      call({ at: '2030-01-01T09:59:59Z', duration_ms: 1 }),
      call({ at: '2030-01-01T10:00:10Z', duration_ms: 50 }),
      call({ at: '2030-01-01T10:01:10Z', duration_ms: 50 }),
      call({ at: '2030-01-01T10:02:00Z', duration_ms: 1 }),
    ]);
    const window = { since: '2030-01-01T10:00:00Z', until: '2030-01-01T10:02:00Z' };
    const answer = await metrics(who, window);
    expect(answer).toMatchObject(window);
    expect(answer.items).toHaveLength(1);
    expect(answer.items[0]).toMatchObject({ invocations: 2 });
    expect(withinBinOf(answer.items[0]!.p50_ms, 50)).toBe(true);
    expect((await metrics(who, { since: '2030-01-01T10:02:00Z' })).items[0]).toMatchObject({ invocations: 1 });
    expect((await metrics(who, { until: '2030-01-01T10:00:00Z' })).items[0]).toMatchObject({ invocations: 1 });
  });

  it('lists every tool with calls in the window, by name, and one when named', async () => {
    const who = h.caller([]);
    await record(who, [call({ tool: 'wait' }), call({ tool: 'echo' }), call({ tool: 'fs__read_file', source: 'fs' })]);
    expect((await metrics(who)).items.map((e) => e.tool)).toEqual(['echo', 'fs__read_file', 'wait']);
    expect((await metrics(who, { name: 'wait' })).items.map((e) => e.tool)).toEqual(['wait']);
  });

  it('answers zeros for a known tool without calls, and not_found for an unknown one', async () => {
    const who = h.caller([]);
    expect((await metrics(who, { name: 'memory_read' })).items).toEqual([
      {
        tool: 'memory_read',
        invocations: 0,
        failures: 0,
        invalid_args: 0,
        approvals_requested: 0,
        p50_ms: 0,
        p95_ms: 0,
        p99_ms: 0,
      },
    ]);
    for (const method of ['tools.metrics', 'tools.content_stats']) {
      expect(await h.outcome(method, { name: 'no_such_tool' }, who)).toMatchObject({ ok: false, code: 'not_found' });
    }
  });

  it('sums bytes in and out and offloaded artifacts per tool in content_stats', async () => {
    const who = h.caller([]);
    await record(who, [
      call({ bytes_in: 10, bytes_out: 1_000, artifacts_offloaded: 1 }),
      call({ bytes_in: 5, bytes_out: 24, at: '2030-01-01T11:00:00Z' }),
      call({ tool: 'wait', bytes_in: 7, bytes_out: 0 }),
    ]);
    const answer = await h.call('tools.content_stats', {}, who);
    expect(ToolContentStats.safeParse(answer).success).toBe(true);
    expect(answer).toEqual({
      items: [
        { tool: 'echo', invocations: 2, bytes_in: 15, bytes_out: 1_024, artifacts_offloaded: 1 },
        { tool: 'wait', invocations: 1, bytes_in: 7, bytes_out: 0, artifacts_offloaded: 0 },
      ],
    });
    const late = await h.call('tools.content_stats', { name: 'echo', since: '2030-01-01T10:30:00Z' }, who);
    expect(late).toEqual({
      since: '2030-01-01T10:30:00Z',
      items: [{ tool: 'echo', invocations: 1, bytes_in: 5, bytes_out: 24, artifacts_offloaded: 0 }],
    });
  });

  it("does not show one tenant's calls to another", async () => {
    await record(h.caller([]), [call()]);
    expect((await metrics(h.caller([]))).items).toEqual([]);
  });

  it.each(['tools.metrics', 'tools.content_stats'])('%s refuses since after until with invalid_request', async (m) => {
    const body = { since: '2030-01-01T11:00:00Z', until: '2030-01-01T10:00:00Z' };
    expect(await h.outcome(m, body, h.caller([]))).toMatchObject({ ok: false, code: 'invalid_request' });
  });

  it.each(['tools.metrics', 'tools.content_stats'])('%s refuses a malformed since with invalid_request', async (m) => {
    expect(await h.outcome(m, { since: 'last week' }, h.caller([]))).toMatchObject({
      ok: false,
      code: 'invalid_request',
    });
  });

  it.each(['tools.metrics', 'tools.content_stats'])(
    '%s refuses a body naming another tenant with identity_required',
    async (m) => {
      const outcome = await h.outcome(m, { identity: { tenant: 'elsewhere' } }, h.caller(['admin', 'console:fleet']));
      expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
    },
  );
});
