/**
 * Call durations as a fixed log-scale histogram, so that counts recorded per
 * minute add up over any window and percentiles come out of the sum.
 *
 * Bin 0 holds durations under {@link LATENCY_HISTOGRAM.minMs}; bin i ≥ 1 holds
 * [minMs·g^(i-1), minMs·g^i) with g = 2^(1/8) (each bin about 9% wide); the
 * last bin is open-ended (from about 3 hours on). A percentile is the
 * geometric middle of the bin its rank falls in, so it is off by at most half
 * a bin's width (about 4.5%) from the exact value.
 */

/** The histogram's fixed layout. Changing it makes stored counts unreadable. */
export const LATENCY_HISTOGRAM = Object.freeze({
  /** Upper bound of bin 0, in ms. */
  minMs: 0.01,
  /** Bins per doubling of the duration. */
  binsPerDoubling: 8,
  /** Number of bins; the last is open-ended. */
  bins: 242,
});

const LOG_GROWTH = Math.LN2 / LATENCY_HISTOGRAM.binsPerDoubling;
const LAST = LATENCY_HISTOGRAM.bins - 1;

/** Counts by bin index (sparse: absent bins are 0). */
export type LatencyCounts = Readonly<Record<number, number>>;

/** The bin of a duration in ms (negative and NaN read as 0). */
export function binOf(durationMs: number): number {
  if (!(durationMs >= LATENCY_HISTOGRAM.minMs)) return 0;
  const index = Math.floor(Math.log(durationMs / LATENCY_HISTOGRAM.minMs) / LOG_GROWTH) + 1;
  return Math.min(index, LAST);
}

/** The bounds of bin `index` in ms: `[lower, upper)`, upper Infinity for the last bin. */
export function binBounds(index: number): { readonly lower: number; readonly upper: number } {
  if (index <= 0) return { lower: 0, upper: LATENCY_HISTOGRAM.minMs };
  const lower = LATENCY_HISTOGRAM.minMs * Math.exp((index - 1) * LOG_GROWTH);
  if (index >= LAST) return { lower, upper: Infinity };
  return { lower, upper: LATENCY_HISTOGRAM.minMs * Math.exp(index * LOG_GROWTH) };
}

/** The value a percentile falling in bin `index` reports: its geometric middle (half of bin 0; the lower bound of the last). */
export function binValue(index: number): number {
  const { lower, upper } = binBounds(index);
  if (index <= 0) return upper / 2;
  if (upper === Infinity) return lower;
  return Math.sqrt(lower * upper);
}

/** Adds `more` into `into` (bin by bin). */
export function addCounts(into: Record<number, number>, more: LatencyCounts): void {
  for (const [bin, count] of Object.entries(more)) {
    const index = Number(bin);
    into[index] = (into[index] ?? 0) + count;
  }
}

/**
 * The `q` quantile (0 < q ≤ 1) of the durations counted, in ms, by nearest
 * rank: the smallest bin whose cumulative count reaches ⌈q·total⌉. 0 when
 * nothing was counted.
 */
export function percentile(counts: LatencyCounts, q: number): number {
  const bins = Object.entries(counts)
    .map(([bin, count]) => [Number(bin), count] as const)
    .filter(([, count]) => count > 0)
    .sort(([a], [b]) => a - b);
  const total = bins.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return 0;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [bin, count] of bins) {
    seen += count;
    if (seen >= rank) return binValue(bin);
  }
  return binValue(bins[bins.length - 1]?.[0] ?? 0);
}
