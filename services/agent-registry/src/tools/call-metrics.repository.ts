import type { ToolCallRecord } from '@ars/contracts';
import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Store } from '@ars/store';
import { binOf } from './latency-histogram.ts';
import type { LatencyCounts } from './latency-histogram.ts';

/**
 * Tool call counters per (tenant, tool, minute): each batch of
 * `_tools.record_calls` adds into them with `$inc`, so any window of whole
 * minutes sums them. `_id` is the JSON of [tenant, tool, minute].
 */
export interface ToolCallBucket {
  _id: string;
  tenant: string;
  /** The exposed tool name. */
  tool: string;
  /** Start of the minute, epoch ms. */
  minute: number;
  /** As the last call in the bucket reported them. */
  transport: string;
  source: string;
  /** Every call the planner asked for, whatever its outcome. */
  invocations: number;
  /** Calls that ran and failed (`failed`, `policy_exhausted`). */
  failures: number;
  invalid_args: number;
  approvals_requested: number;
  bytes_in: number;
  bytes_out: number;
  artifacts_offloaded: number;
  /** Calls that ran (`completed`, `failed`, `policy_exhausted`): those whose duration is in `latency`. */
  timed: number;
  /** Counts by latency bin, keyed `b<index>` (see `latency-histogram.ts`). */
  latency: Record<string, number>;
}

/** The counters a bucket adds up. */
export const BUCKET_COUNTERS = [
  'invocations',
  'failures',
  'invalid_args',
  'approvals_requested',
  'bytes_in',
  'bytes_out',
  'artifacts_offloaded',
  'timed',
] as const;
export type BucketCounter = (typeof BUCKET_COUNTERS)[number];

/** A window of whole minutes: epoch ms, `since` inclusive, `until` exclusive; absent ends are open. */
export interface MinuteWindow {
  readonly since?: number | undefined;
  readonly until?: number | undefined;
}

export interface CallMetricsRepository {
  /** Adds a batch of one tenant's calls into their buckets; answers how many calls were counted. */
  record(tenant: string, calls: readonly ToolCallRecord[]): Promise<number>;
  /** The tenant's buckets (of one tool, when named) whose minute overlaps the window. */
  buckets(tenant: string, window: MinuteWindow, tool?: string): Promise<ToolCallBucket[]>;
}

const MINUTE_MS = 60_000;
const RAN = new Set<ToolCallRecord['outcome']>(['completed', 'failed', 'policy_exhausted']);
const FAILED = new Set<ToolCallRecord['outcome']>(['failed', 'policy_exhausted']);

/** The start of the minute `at` falls in, epoch ms. */
export function minuteOf(at: string): number {
  const ms = Date.parse(at);
  return ms - (((ms % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
}

interface Delta {
  readonly tool: string;
  readonly minute: number;
  transport: string;
  source: string;
  readonly counters: Record<BucketCounter, number>;
  readonly latency: Record<number, number>;
}

/** One delta per (tool, minute) of the batch, so that a batch makes one write per bucket. */
export function groupCalls(calls: readonly ToolCallRecord[]): Delta[] {
  const deltas = new Map<string, Delta>();
  for (const call of calls) {
    const minute = minuteOf(call.at);
    const key = JSON.stringify([call.tool, minute]);
    let delta = deltas.get(key);
    if (delta === undefined) {
      const counters = Object.fromEntries(BUCKET_COUNTERS.map((c) => [c, 0])) as Record<BucketCounter, number>;
      delta = { tool: call.tool, minute, transport: call.transport, source: call.source, counters, latency: {} };
      deltas.set(key, delta);
    }
    delta.transport = call.transport;
    delta.source = call.source;
    const c = delta.counters;
    c.invocations += 1;
    if (FAILED.has(call.outcome)) c.failures += 1;
    if (call.outcome === 'invalid_args') c.invalid_args += 1;
    if (call.approval_requested) c.approvals_requested += 1;
    c.bytes_in += call.bytes_in;
    c.bytes_out += call.bytes_out;
    c.artifacts_offloaded += call.artifacts_offloaded;
    if (RAN.has(call.outcome)) {
      c.timed += 1;
      const bin = binOf(call.duration_ms);
      delta.latency[bin] = (delta.latency[bin] ?? 0) + 1;
    }
  }
  return [...deltas.values()];
}

/** A bucket's latency counts by bin index. */
export function latencyOf(bucket: ToolCallBucket): LatencyCounts {
  const counts: Record<number, number> = {};
  for (const [key, count] of Object.entries(bucket.latency ?? {})) counts[Number(key.slice(1))] = count;
  return counts;
}

/** The store-backed {@link CallMetricsRepository}; creates its indexes. */
export async function createCallMetricsRepository(store: Store): Promise<CallMetricsRepository> {
  const buckets: Collection<ToolCallBucket> = store.collection<ToolCallBucket>('tool_call_metrics');
  await buckets.createIndex({ tenant: 1 });
  if (store.compoundIndexes) {
    await buckets.createIndex({ tenant: 1, minute: 1 });
    await buckets.createIndex({ tenant: 1, tool: 1, minute: 1 });
  }

  async function add(tenant: string, delta: Delta): Promise<void> {
    const inc: Record<string, number> = { ...delta.counters };
    for (const [bin, count] of Object.entries(delta.latency)) inc[`latency.b${bin}`] = count;
    const write = () =>
      buckets.updateOne(
        { _id: JSON.stringify([tenant, delta.tool, delta.minute]) },
        {
          $setOnInsert: { tenant, tool: delta.tool, minute: delta.minute },
          $set: { transport: delta.transport, source: delta.source },
          $inc: inc,
        },
        { upsert: true },
      );
    try {
      await write();
    } catch (error) {
      // Two first writes of one bucket raced on the upsert: it exists now, so this one adds into it.
      if (!isDuplicateKeyError(error)) throw error;
      await write();
    }
  }

  return {
    async record(tenant, calls) {
      await Promise.all(groupCalls(calls).map((delta) => add(tenant, delta)));
      return calls.length;
    },
    buckets(tenant, window, tool) {
      const minute: Record<string, number> = {};
      if (window.since !== undefined) minute.$gt = window.since - MINUTE_MS;
      if (window.until !== undefined) minute.$lt = window.until;
      return buckets.find({
        tenant,
        ...(tool === undefined ? {} : { tool }),
        ...(Object.keys(minute).length === 0 ? {} : { minute }),
      });
    },
  };
}
