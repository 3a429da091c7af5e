import { describe, expect, it } from 'vitest';
import {
  addCounts,
  binBounds,
  binOf,
  binValue,
  LATENCY_HISTOGRAM,
  percentile,
} from '../../src/tools/latency-histogram.ts';

/** Counts of `durations` by bin. */
function histogram(durations: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const d of durations) counts[binOf(d)] = (counts[binOf(d)] ?? 0) + 1;
  return counts;
}

/** The exact nearest-rank quantile. */
function exact(durations: readonly number[], q: number): number {
  const sorted = [...durations].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] ?? 0;
}

/** A deterministic spread of durations over six decades (a linear congruential sequence). */
function durations(n: number, seed = 7): number[] {
  let x = seed;
  return Array.from({ length: n }, () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return 0.05 * 10 ** ((x / 2 ** 31) * 6);
  });
}

describe('latency histogram', () => {
  it('puts every duration in the bin whose bounds hold it', () => {
    for (const d of [0, 0.009, 0.01, 0.0137, 1, 2.5, 999.9, 60_000, 3_600_000]) {
      const { lower, upper } = binBounds(binOf(d));
      expect(d, String(d)).toBeGreaterThanOrEqual(lower);
      expect(d, String(d)).toBeLessThan(upper);
    }
  });

  it('makes bins about 9% wide, each starting where the last ended', () => {
    for (let i = 1; i < LATENCY_HISTOGRAM.bins - 1; i++) {
      const { lower, upper } = binBounds(i);
      expect(upper / lower).toBeCloseTo(2 ** (1 / 8), 12);
      expect(binBounds(i + 1).lower).toBeCloseTo(upper, 9);
    }
  });

  it('counts negative and non-numeric durations in bin 0 and huge ones in the open last bin', () => {
    expect([binOf(-1), binOf(Number.NaN)]).toEqual([0, 0]);
    const last = LATENCY_HISTOGRAM.bins - 1;
    expect(binOf(1e12)).toBe(last);
    expect(binBounds(last).upper).toBe(Infinity);
    expect(binValue(last)).toBe(binBounds(last).lower);
  });

  it('answers p50 and p99 within half a bin of the exact values', () => {
    const sample = durations(10_000);
    const counts = histogram(sample);
    for (const q of [0.5, 0.95, 0.99]) {
      const truth = exact(sample, q);
      const { lower, upper } = binBounds(binOf(truth));
      expect(percentile(counts, q)).toBeGreaterThanOrEqual(lower);
      expect(percentile(counts, q)).toBeLessThan(upper);
      expect(Math.abs(percentile(counts, q) - truth) / truth).toBeLessThan(0.045);
    }
  });

  it('ranks by nearest rank: the p50 of 1, 2, 3, 100 ms is in the bin of 2 ms and the p99 in the bin of 100 ms', () => {
    const counts = histogram([1, 2, 3, 100]);
    expect(binOf(percentile(counts, 0.5))).toBe(binOf(2));
    expect(binOf(percentile(counts, 0.99))).toBe(binOf(100));
  });

  it('gives the same percentiles for counts added up minute by minute as for all at once', () => {
    const sample = durations(2_000, 11);
    const summed: Record<number, number> = {};
    for (let i = 0; i < sample.length; i += 100) addCounts(summed, histogram(sample.slice(i, i + 100)));
    const whole = histogram(sample);
    expect(summed).toEqual(whole);
    expect(percentile(summed, 0.99)).toBe(percentile(whole, 0.99));
  });

  it('answers 0 when nothing was counted', () => {
    expect(percentile({}, 0.5)).toBe(0);
    expect(percentile({ 3: 0 }, 0.99)).toBe(0);
  });
});
