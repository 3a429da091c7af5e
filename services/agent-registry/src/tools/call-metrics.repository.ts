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

/** What recording a batch did. */
export interface RecordOutcome {
  /** Calls counted (0 for a repeated batch). */
  readonly recorded: number;
  /** The batch id was counted before: nothing was added. */
  readonly duplicate: boolean;
}

export interface CallMetricsRepository {
  /**
   * Adds a batch of one tenant's calls into their buckets. With a
   * `batchId`, a batch already counted (its receipt younger than
   * {@link BATCH_RECEIPT_TTL_MS}) is not counted again.
   */
  record(tenant: string, calls: readonly ToolCallRecord[], batchId?: string): Promise<RecordOutcome>;
  /** The tenant's buckets (of one tool, when named) whose minute overlaps the window. */
  buckets(tenant: string, window: MinuteWindow, tool?: string): Promise<ToolCallBucket[]>;
  /**
   * Deletes the buckets of minutes that started before `bucketsBefore`
   * (epoch ms) and the batch receipts older than {@link BATCH_RECEIPT_TTL_MS}
   * at `now`; answers how many of each.
   */
  prune(bucketsBefore: number, now?: number): Promise<{ buckets: number; receipts: number }>;
}

/**
 * How long a batch id is remembered: longer than the engine keeps retrying
 * a batch while agent-registry does not answer (its queue holds 10,000
 * records, a few minutes of a busy executor).
 */
export const BATCH_RECEIPT_TTL_MS = 24 * 3_600_000;

/** Documents deleted per store operation by a prune. */
export const PRUNE_BATCH = 250;

/** The receipt of a counted batch. `_id` is the JSON of [tenant, batch id]. */
interface BatchReceipt {
  _id: string;
  tenant: string;
  /** Epoch ms. */
  recorded_at: number;
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
  const receipts: Collection<BatchReceipt> = store.collection<BatchReceipt>('tool_call_batches');
  await buckets.createIndex({ tenant: 1 });
  await buckets.createIndex({ minute: 1 });
  await receipts.createIndex({ recorded_at: 1 });
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

  /** Deletes, a batch at a time, the documents of `collection` whose `field` is below `cutoff`. */
  async function deleteBelow<T extends { _id: string }>(
    collection: Collection<T>,
    field: 'minute' | 'recorded_at',
    cutoff: number,
  ): Promise<number> {
    let deleted = 0;
    for (;;) {
      const old = await collection.find({ [field]: { $lt: cutoff } } as never, {
        sort: { [field]: 1 },
        limit: PRUNE_BATCH,
        projection: { _id: 1 },
      });
      if (old.length === 0) return deleted;
      deleted += (await collection.deleteMany({ _id: { $in: old.map((d) => d._id) } } as never)).deletedCount;
      if (old.length < PRUNE_BATCH) return deleted;
    }
  }

  return {
    async record(tenant, calls, batchId) {
      const receiptId = batchId === undefined ? undefined : JSON.stringify([tenant, batchId]);
      if (receiptId !== undefined) {
        try {
          await receipts.insertOne({ _id: receiptId, tenant, recorded_at: Date.now() });
        } catch (error) {
          if (isDuplicateKeyError(error)) return { recorded: 0, duplicate: true };
          throw error;
        }
      }
      try {
        await Promise.all(groupCalls(calls).map((delta) => add(tenant, delta)));
      } catch (error) {
        // Not counted (or only partly): the sender's retry must not be taken for a repeat.
        if (receiptId !== undefined) await receipts.deleteOne({ _id: receiptId }).catch(() => undefined);
        throw error;
      }
      return { recorded: calls.length, duplicate: false };
    },
    async prune(bucketsBefore, now = Date.now()) {
      return {
        buckets: await deleteBelow(buckets, 'minute', bucketsBefore),
        receipts: await deleteBelow(receipts, 'recorded_at', now - BATCH_RECEIPT_TTL_MS),
      };
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
