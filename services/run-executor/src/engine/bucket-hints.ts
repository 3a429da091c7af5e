import { PRIORITY_BUCKETS } from './priority.ts';
import type { PriorityBucket } from './priority.ts';

/**
 * Which buckets may hold work, so that a claim pulls only those: a pull of
 * an empty bucket is a JetStream API request and a status reply for
 * nothing (three pulls per claimed run before, one now). A publish on a
 * bucket marks it; a pull that came back short clears it, unless a publish
 * marked it while the pull was under way; every `idlePollMs` all are marked
 * again, for redeliveries (they publish nothing).
 */
export class BucketHints {
  readonly #marks = new Map<PriorityBucket, number>();
  readonly #cleared = new Map<PriorityBucket, number>();
  #markedAllAt = 0;
  readonly #periodMs: number;

  constructor(periodMs: number) {
    this.#periodMs = periodMs;
  }

  mark(bucket: PriorityBucket): void {
    this.#marks.set(bucket, (this.#marks.get(bucket) ?? 0) + 1);
  }

  /** Marks every bucket once per period. */
  refresh(now: number): void {
    if (now - this.#markedAllAt < this.#periodMs) return;
    this.#markedAllAt = now;
    for (const bucket of PRIORITY_BUCKETS) this.mark(bucket);
  }

  /** The mark count to hand back to {@link clear}; undefined when the bucket is known empty. */
  ready(bucket: PriorityBucket): number | undefined {
    const marks = this.#marks.get(bucket) ?? 0;
    return marks > (this.#cleared.get(bucket) ?? -1) ? marks : undefined;
  }

  /** The bucket came back short after `ready` said `marks`: empty, unless marked since. */
  clear(bucket: PriorityBucket, marks: number): void {
    this.#cleared.set(bucket, marks);
  }
}
