/**
 * Priority scheme of the RUNS work queue. A task's priority is any integer
 * (higher runs first, default 0); the queue has three buckets, each its own
 * subject and its own durable pull consumer, and an executor always drains
 * a higher bucket before it pulls from a lower one:
 *
 * | priority | bucket   | subject             | consumer           |
 * |----------|----------|---------------------|--------------------|
 * | > 0      | `high`   | `ars.runs.high`     | `executors-high`   |
 * | 0        | `normal` | `ars.runs.normal`   | `executors-normal` |
 * | < 0      | `low`    | `ars.runs.low`      | `executors-low`    |
 *
 * Within a bucket, runs are taken in the order they were queued.
 */

/** Buckets in the order an executor pulls them. */
export const PRIORITY_BUCKETS = ['high', 'normal', 'low'] as const;
export type PriorityBucket = (typeof PRIORITY_BUCKETS)[number];

/** Prefix of every executor consumer's durable name (`executors-<bucket>`). */
export const CONSUMER_PREFIX = 'executors';

/** The bucket of a priority. */
export function bucketOf(priority: number): PriorityBucket {
  if (priority > 0) return 'high';
  if (priority < 0) return 'low';
  return 'normal';
}

/** The durable consumer that serves a bucket. */
export function consumerName(bucket: PriorityBucket): string {
  return `${CONSUMER_PREFIX}-${bucket}`;
}
