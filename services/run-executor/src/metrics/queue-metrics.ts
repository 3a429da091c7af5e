import { RUNS_STREAM } from '@ars/bus';
import type { Bus } from '@ars/bus';
import type { Metrics } from '@ars/telemetry';
import { PRIORITY_BUCKETS, consumerName } from '../engine/priority.ts';
import type { PriorityBucket } from '../engine/priority.ts';

/**
 * The executor's gauges: the RUNS work queue per priority bucket (read from
 * the JetStream consumers' info, at most once per refresh interval however
 * many scrapers ask) and this replica's run slots.
 */

/** What one bucket consumer's info tells. */
export interface ConsumerFigures {
  readonly bucket: PriorityBucket;
  /** Runs queued and not yet delivered to any executor (`num_pending`). */
  readonly pending: number;
  /** Runs delivered and not yet acknowledged: running (`num_ack_pending`). */
  readonly ackPending: number;
}

/** How long figures read from JetStream are served before they are read again, in ms. */
export const QUEUE_REFRESH_MS = 5_000;

/**
 * Serves `read`'s figures cached for `refreshMs`: one read under way at a
 * time, shared by every caller; a failed read serves nothing (no stale
 * figure passes for a fresh one).
 */
export function cachedFigures(
  read: () => Promise<readonly ConsumerFigures[]>,
  refreshMs: number = QUEUE_REFRESH_MS,
  now: () => number = Date.now,
): () => Promise<readonly ConsumerFigures[] | undefined> {
  let cached: { at: number; figures: readonly ConsumerFigures[] | undefined } | undefined;
  let reading: Promise<readonly ConsumerFigures[] | undefined> | undefined;
  return () => {
    if (cached !== undefined && now() - cached.at < refreshMs) return Promise.resolve(cached.figures);
    reading ??= read()
      .then(
        (figures) => figures,
        () => undefined,
      )
      .then((figures) => {
        cached = { at: now(), figures };
        reading = undefined;
        return figures;
      });
    return reading;
  };
}

/** Reads the three bucket consumers of RUNS. */
export function readConsumers(bus: Bus): () => Promise<readonly ConsumerFigures[]> {
  return () =>
    Promise.all(
      PRIORITY_BUCKETS.map(async (bucket) => {
        const info = await bus.jsm.consumers.info(RUNS_STREAM, consumerName(bucket));
        return { bucket, pending: info.num_pending, ackPending: info.num_ack_pending };
      }),
    );
}

/** What {@link observeExecutor} reads. */
export interface ExecutorGauges {
  readonly figures: () => Promise<readonly ConsumerFigures[] | undefined>;
  /** Runs in flight on this replica. */
  readonly busy: () => number;
  /** Runs this replica takes at once (`EXECUTOR_CONCURRENCY`). */
  readonly capacity: number;
}

/**
 * Observes `ars.runs.queue.depth` and `ars.runs.queue.lag` per priority, and
 * `ars.executor.slots` busy and free. The lag is pending plus unacknowledged
 * runs (waiting plus running): the figure KEDA's nats-jetstream scaler
 * reads, so that alerts and autoscaling agree.
 */
export function observeExecutor(metrics: Metrics, gauges: ExecutorGauges): void {
  const attributes = new Map(
    PRIORITY_BUCKETS.map((bucket) => [bucket, { ...metrics.service, 'ars.priority': bucket }]),
  );
  metrics.gauge(
    'ars.runs.queue.depth',
    { description: 'Runs queued on RUNS and not yet delivered to an executor, by priority bucket', unit: '{run}' },
    async (result) => {
      for (const f of (await gauges.figures()) ?? []) result.observe(f.pending, attributes.get(f.bucket));
    },
  );
  metrics.gauge(
    'ars.runs.queue.lag',
    {
      description:
        'Consumer lag of RUNS by priority bucket: runs waiting plus runs running (pending + unacknowledged), as KEDA reads it',
      unit: '{run}',
    },
    async (result) => {
      for (const f of (await gauges.figures()) ?? []) {
        result.observe(f.pending + f.ackPending, attributes.get(f.bucket));
      }
    },
  );
  const busy = { ...metrics.service, 'ars.slot.state': 'busy' };
  const free = { ...metrics.service, 'ars.slot.state': 'free' };
  metrics.gauge(
    'ars.executor.slots',
    { description: 'Run slots of this executor replica, busy and free', unit: '{slot}' },
    (result) => {
      const active = gauges.busy();
      result.observe(active, busy);
      result.observe(Math.max(0, gauges.capacity - active), free);
    },
  );
}
