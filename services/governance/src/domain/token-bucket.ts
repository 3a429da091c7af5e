import type { RateLimit } from '@ars/contracts';

/**
 * Token-bucket arithmetic (pure, integer). A bucket holds at most `capacity`
 * tokens and gains `refill_tokens` at the end of every whole `refill_every_ms`
 * interval since `refilled_at_ms`. A `wait` policy reserves tokens ahead of
 * time: the level may go negative, and later callers queue behind the debt.
 */

/** The stored state of one bucket. */
export interface BucketState {
  /** Tokens available now; negative while reservations are outstanding. */
  readonly level: number;
  /** Epoch milliseconds at which the current refill interval started. */
  readonly refilled_at_ms: number;
}

/** Outcome of {@link takeTokens}. */
export type TakeOutcome =
  | { readonly outcome: 'granted'; readonly state: BucketState; readonly available: number }
  | { readonly outcome: 'delayed'; readonly state: BucketState; readonly available: number; readonly wait_ms: number }
  | {
      readonly outcome: 'refused';
      /** Refilled but not drawn from: persist it or not, the level is unchanged. */
      readonly state: BucketState;
      readonly available: number;
      /** Why: more than the bucket can ever hold, the `fail` policy, or a wait above `max_wait_ms`. */
      readonly reason: 'over_capacity' | 'empty' | 'wait_too_long';
      /** How long until the tokens would be there (0 for over_capacity). */
      readonly wait_ms: number;
    };

/**
 * The bucket at `nowMs`: whole intervals elapsed since `refilled_at_ms` are
 * credited, capped at `capacity` (also after a lowered capacity). A missing
 * bucket starts full. A full bucket restarts its interval at `nowMs`.
 */
export function refillBucket(state: BucketState | undefined, limit: RateLimit, nowMs: number): BucketState {
  if (state === undefined) return { level: limit.capacity, refilled_at_ms: nowMs };
  const elapsed = Math.max(0, nowMs - state.refilled_at_ms);
  const intervals = Math.floor(elapsed / limit.refill_every_ms);
  const level = Math.min(limit.capacity, state.level + intervals * limit.refill_tokens);
  if (level >= limit.capacity) return { level: limit.capacity, refilled_at_ms: nowMs };
  return { level, refilled_at_ms: state.refilled_at_ms + intervals * limit.refill_every_ms };
}

/** Milliseconds from `nowMs` until a refilled bucket holds `requested` tokens (0 when it already does). */
export function waitFor(state: BucketState, limit: RateLimit, requested: number, nowMs: number): number {
  const deficit = requested - state.level;
  if (deficit <= 0) return 0;
  const intervals = Math.ceil(deficit / limit.refill_tokens);
  return Math.max(0, state.refilled_at_ms + intervals * limit.refill_every_ms - nowMs);
}

/** The `Available` figure: what the bucket holds, never below zero. */
export function availableTokens(state: BucketState): number {
  return Math.max(0, state.level);
}

/**
 * Draws `requested` tokens at `nowMs` under the limit's policy: granted when
 * the bucket holds them; otherwise `fail` refuses, and `wait` reserves them
 * (level goes negative) and reports the delay, unless the delay exceeds
 * `max_wait_ms`. A request above `capacity` can never fit and is refused.
 */
export function takeTokens(
  current: BucketState | undefined,
  limit: RateLimit,
  requested: number,
  nowMs: number,
): TakeOutcome {
  const state = refillBucket(current, limit, nowMs);
  const available = availableTokens(state);
  if (requested > limit.capacity) return { outcome: 'refused', state, available, reason: 'over_capacity', wait_ms: 0 };
  const drawn: BucketState = { level: state.level - requested, refilled_at_ms: state.refilled_at_ms };
  if (state.level >= requested) return { outcome: 'granted', state: drawn, available };
  const wait = waitFor(state, limit, requested, nowMs);
  if (limit.on_limit === 'fail') return { outcome: 'refused', state, available, reason: 'empty', wait_ms: wait };
  if (wait > limit.max_wait_ms) return { outcome: 'refused', state, available, reason: 'wait_too_long', wait_ms: wait };
  return { outcome: 'delayed', state: drawn, available, wait_ms: wait };
}
