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
 * within {@link RACE_WINDOW_MS} of a publish this executor has not pulled
 * yet a short pull does not clear the bucket, and the claim loop asks again
 * after {@link RACE_RETRY_MS} instead of sleeping ({@link settling}). A
 * publish is known by its `Nats-Msg-Id`, so one this executor pulled
 * already ({@link took}) holds nothing back: a lone run no longer costs a
 * pull every few ms for the rest of the window (8.7 pulls per run with one
 * client, each a request and a status reply). A publish without an id, or
 * taken by another executor, or dropped as a duplicate, waits out its window.
 */
export const RACE_WINDOW_MS = 25;
export const RACE_RETRY_MS = 2;

export class BucketHints {
  readonly #marks = new Map<PriorityBucket, number>();
  /** Publishes of the last {@link RACE_WINDOW_MS} not pulled here yet, by message id, with when they were seen. */
  readonly #unpulled = new Map<PriorityBucket, Map<string, number>>();
  #anonymous = 0;
  readonly #cleared = new Map<PriorityBucket, number>();
  #markedAllAt = 0;
  readonly #periodMs: number;

  constructor(periodMs: number) {
    this.#periodMs = periodMs;
  }

  /** A publish on `bucket`, with its `Nats-Msg-Id` when it has one. */
  mark(bucket: PriorityBucket, now = Date.now(), messageId?: string): void {
    this.#marks.set(bucket, (this.#marks.get(bucket) ?? 0) + 1);
    const unpulled = this.#unpulledOf(bucket, now);
    const id = messageId ?? `\0${(this.#anonymous += 1)}`;
    unpulled.delete(id); // a repeat (a retried publish) counts from now
    unpulled.set(id, now);
  }

  /** A pull of `bucket` brought the messages with these `Nats-Msg-Id`s. */
  took(bucket: PriorityBucket, messageIds: readonly (string | undefined)[]): void {
    const unpulled = this.#unpulled.get(bucket);
    if (unpulled === undefined) return;
    for (const id of messageIds) if (id !== undefined) unpulled.delete(id);
  }

  /** The bucket's unpulled publishes, those older than the race window dropped (oldest first in the map). */
  #unpulledOf(bucket: PriorityBucket, now: number): Map<string, number> {
    let unpulled = this.#unpulled.get(bucket);
    if (unpulled === undefined) {
      unpulled = new Map();
      this.#unpulled.set(bucket, unpulled);
    }
    for (const [id, at] of unpulled) {
      if (now - at < RACE_WINDOW_MS) break;
      unpulled.delete(id);
    }
    return unpulled;
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
   * marked since, or holding a publish so recent that the stream may not
   * have stored it yet and not pulled here (then true: ask again shortly).
   */
  clear(bucket: PriorityBucket, marks: number, now = Date.now()): boolean {
    if (this.#unpulledOf(bucket, now).size > 0) return true;
    this.#cleared.set(bucket, marks);
    return false;
  }
}
