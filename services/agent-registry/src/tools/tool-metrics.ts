import type { ToolContentStatsEntry, ToolMetricsEntry } from '@ars/contracts';
import { BUCKET_COUNTERS, latencyOf } from './call-metrics.repository.ts';
import type { BucketCounter, ToolCallBucket } from './call-metrics.repository.ts';
import { addCounts, percentile } from './latency-histogram.ts';

/** One tool's buckets summed over a window. */
export interface ToolTotals {
  readonly tool: string;
  readonly counters: Readonly<Record<BucketCounter, number>>;
  readonly latency: Readonly<Record<number, number>>;
}

const zeroCounters = (): Record<BucketCounter, number> =>
  Object.fromEntries(BUCKET_COUNTERS.map((c) => [c, 0])) as Record<BucketCounter, number>;

/** Sums buckets per tool, by tool name. */
export function sumByTool(buckets: readonly ToolCallBucket[]): ToolTotals[] {
  const totals = new Map<string, { counters: Record<BucketCounter, number>; latency: Record<number, number> }>();
  for (const bucket of buckets) {
    let total = totals.get(bucket.tool);
    if (total === undefined) {
      total = { counters: zeroCounters(), latency: {} };
      totals.set(bucket.tool, total);
    }
    for (const counter of BUCKET_COUNTERS) total.counters[counter] += bucket[counter] ?? 0;
    addCounts(total.latency, latencyOf(bucket));
  }
  return [...totals.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([tool, total]) => ({ tool, ...total }));
}

/** Totals of a tool with no call in the window. */
export function emptyTotals(tool: string): ToolTotals {
  return { tool, counters: zeroCounters(), latency: {} };
}

/** Latencies go out in ms with microsecond precision. */
const ms = (value: number) => Math.round(value * 1000) / 1000;

/** A tool's `tools.metrics` entry: p50, p95 and p99 over the calls that ran. */
export function metricsEntry(totals: ToolTotals): ToolMetricsEntry {
  return {
    tool: totals.tool,
    invocations: totals.counters.invocations,
    failures: totals.counters.failures,
    invalid_args: totals.counters.invalid_args,
    approvals_requested: totals.counters.approvals_requested,
    p50_ms: ms(percentile(totals.latency, 0.5)),
    p95_ms: ms(percentile(totals.latency, 0.95)),
    p99_ms: ms(percentile(totals.latency, 0.99)),
  };
}

/** A tool's `tools.content_stats` entry. */
export function contentStatsEntry(totals: ToolTotals): ToolContentStatsEntry {
  return {
    tool: totals.tool,
    invocations: totals.counters.invocations,
    bytes_in: totals.counters.bytes_in,
    bytes_out: totals.counters.bytes_out,
    artifacts_offloaded: totals.counters.artifacts_offloaded,
  };
}
