import { describe, expect, it } from 'vitest';
import { bucketOf, consumerName, PRIORITY_BUCKETS } from '../../src/engine/priority.ts';

describe('priority buckets', () => {
  it('maps positive, zero and negative priorities to high, normal and low', () => {
    expect([9, 1, 0, -1, -9].map(bucketOf)).toEqual(['high', 'high', 'normal', 'low', 'low']);
  });

  it('pulls the buckets from the highest down', () => {
    expect(PRIORITY_BUCKETS).toEqual(['high', 'normal', 'low']);
    expect(PRIORITY_BUCKETS.map(consumerName)).toEqual(['executors-high', 'executors-normal', 'executors-low']);
  });
});
