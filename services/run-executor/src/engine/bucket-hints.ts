import { PRIORITY_BUCKETS } from './priority.ts';
import type { PriorityBucket } from './priority.ts';

/**
 * Which buckets may hold work, so that a claim pulls only those: a pull of
 * an empty bucket is a JetStream API request and a status reply for
 * nothing (three pulls per claimed run before, one now). A publish on a
 * bucket marks it; a pull that came back short clears it, unless a publish
 * marked it while the pull was under way; every `idlePollMs` all are marked
 * again, for redeliveries (they publish nothing).
 *
 * A publish reaches the executor's wake subscription at about the time the
 * stream stores it, so a pull sent at once can find the bucket still empty:
 * within {@link RACE_WINDOW_MS} of its last publish a short pull does not
 * clear the bucket, and the claim loop asks again after
 * {@link RACE_RETRY_MS} instead of sleeping ({@link settling}).
 */
export const RACE_WINDOW_MS = 25;
export const RACE_RETRY_MS = 2;

export class BucketHints {
  readonly #marks = new Map<PriorityBucket, number>();
  readonly #markedAt = new Map<PriorityBucket, number>();
  readonly #cleared = new Map<PriorityBucket, number>();
  #markedAllAt = 0;
  readonly #periodMs: number;

  constructor(periodMs: number) {
    this.#periodMs = periodMs;
  }

  mark(bucket: PriorityBucket, now = Date.now()): void {
    this.#marks.set(bucket, (this.#marks.get(bucket) ?? 0) + 1);
    this.#markedAt.set(bucket, now);
  }

  /** Marks every bucket once per period. */
  refresh(now: number): void {
    if (now - this.#markedAllAt < this.#periodMs) return;
    this.#markedAllAt = now;
    for (const bucket of PRIORITY_BUCKETS) this.#marks.set(bucket, (this.#marks.get(bucket) ?? 0) + 1);
  }

  /** The mark count to hand back to {@link clear}; undefined when the bucket is known empty. */
  ready(bucket: PriorityBucket): number | undefined {
    const marks = this.#marks.get(bucket) ?? 0;
    return marks > (this.#cleared.get(bucket) ?? -1) ? marks : undefined;
  }

  /**
   * The bucket came back short after `ready` said `marks`: empty, unless
   * marked since, or published to so recently that the stream may not have
   * stored it yet (then true: ask again shortly).
   */
  clear(bucket: PriorityBucket, marks: number, now = Date.now()): boolean {
    if (now - (this.#markedAt.get(bucket) ?? Number.NEGATIVE_INFINITY) < RACE_WINDOW_MS) return true;
    this.#cleared.set(bucket, marks);
    return false;
  }
}
