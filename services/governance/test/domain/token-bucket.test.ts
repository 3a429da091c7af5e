import { describe, expect, it } from 'vitest';
import { RateLimit } from '@ars/contracts';
import { refillBucket, takeTokens, waitFor } from '../../src/domain/token-bucket.ts';

const limit = (overrides: Partial<RateLimit> = {}): RateLimit =>
  RateLimit.parse({ capacity: 3, refill_tokens: 1, refill_every_ms: 1000, ...overrides });

describe('token bucket', () => {
  it('starts a new bucket full', () => {
    expect(refillBucket(undefined, limit(), 5_000)).toEqual({ level: 3, refilled_at_ms: 5_000 });
  });

  it('credits whole refill intervals only', () => {
    const state = refillBucket({ level: 0, refilled_at_ms: 0 }, limit(), 2_500);
    expect(state).toEqual({ level: 2, refilled_at_ms: 2_000 });
  });

  it('never refills above the capacity, even after the capacity was lowered', () => {
    expect(refillBucket({ level: 10, refilled_at_ms: 0 }, limit(), 100)).toEqual({ level: 3, refilled_at_ms: 100 });
  });

  it('grants while tokens last', () => {
    const first = takeTokens(undefined, limit(), 1, 0);
    expect(first).toMatchObject({ outcome: 'granted', available: 3, state: { level: 2 } });
  });

  it('reserves and reports the wait under the wait policy', () => {
    const taken = takeTokens({ level: 0, refilled_at_ms: 0 }, limit(), 2, 400);
    expect(taken).toEqual({
      outcome: 'delayed',
      available: 0,
      wait_ms: 1_600,
      state: { level: -2, refilled_at_ms: 0 },
    });
  });

  it('queues a later caller behind outstanding reservations', () => {
    expect(waitFor({ level: -2, refilled_at_ms: 0 }, limit(), 1, 400)).toBe(2_600);
  });

  it('refuses at once under the fail policy', () => {
    const taken = takeTokens({ level: 0, refilled_at_ms: 0 }, limit({ on_limit: 'fail' }), 1, 0);
    expect(taken).toMatchObject({ outcome: 'refused', reason: 'empty', wait_ms: 1_000, state: { level: 0 } });
  });

  it('refuses a wait longer than max_wait_ms', () => {
    const taken = takeTokens({ level: 0, refilled_at_ms: 0 }, limit({ max_wait_ms: 500 }), 1, 0);
    expect(taken).toMatchObject({ outcome: 'refused', reason: 'wait_too_long', wait_ms: 1_000 });
  });

  it('refuses a draw above the capacity whatever the policy', () => {
    expect(takeTokens(undefined, limit(), 4, 0)).toMatchObject({ outcome: 'refused', reason: 'over_capacity' });
  });
});
