import type { BudgetPeriod } from '@ars/contracts';

/** Every budget period; spend is accumulated in a window of each. */
export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'month', 'total'];

/** Start of the `total` window: the epoch. */
const EPOCH = new Date(0).toISOString();

/**
 * The start (RFC 3339, UTC) of the window of `period` that contains `nowMs`:
 * UTC midnight for `day`, the first of the month for `month`, the epoch for `total`.
 */
export function periodStart(period: BudgetPeriod, nowMs: number): string {
  const now = new Date(nowMs);
  switch (period) {
    case 'day':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
    case 'month':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    case 'total':
      return EPOCH;
  }
}
