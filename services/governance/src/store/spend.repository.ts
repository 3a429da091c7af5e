import type { BudgetPeriod } from '@ars/contracts';
import { isDuplicateKeyError } from '@ars/store';
import type { Store, StoreDocument } from '@ars/store';
import { BUDGET_PERIODS, periodStart } from '../domain/periods.ts';

/** Spend of (tenant, tier) in one window of one period; `_id` = JSON `[tenant, tier, period, period_start]`. */
interface SpendDocument extends StoreDocument {
  tenant: string;
  tier: string;
  period: BudgetPeriod;
  period_start: string;
  spent_usd: number;
  tokens_in: number;
  tokens_out: number;
  calls: number;
  updated_at: string;
}

/** A recorded LLM call's receipt: it makes `record_cost` idempotent by `call_id`, for the receipt retention (then pruned). */
interface CostCallDocument extends StoreDocument {
  tenant: string;
  recorded_at: string;
}

/** Spend of one window, as read. */
export interface SpendWindow {
  readonly tier: string;
  readonly period: BudgetPeriod;
  readonly period_start: string;
  readonly spent_usd: number;
  readonly tokens_in: number;
  readonly tokens_out: number;
  readonly calls: number;
}

/** One LLM call's cost. */
export interface CostAmounts {
  readonly cost_usd: number;
  readonly tokens_in: number;
  readonly tokens_out: number;
}

/** Spend per tenant, tier and period window. */
export interface SpendRepository {
  /**
   * Adds one call to the current window of every period. With a `callId`
   * already recorded for the tenant nothing is added (`duplicate: true`).
   */
  add(
    tenant: string,
    tier: string,
    amounts: CostAmounts,
    nowMs: number,
    callId?: string,
  ): Promise<{ readonly windows: SpendWindow[]; readonly duplicate: boolean }>;
  /** The current window of `period` (zeros when nothing was spent in it). */
  current(tenant: string, tier: string, period: BudgetPeriod, nowMs: number): Promise<SpendWindow>;
  /** The current window of every period for every tier the tenant spent in. */
  currentForTenant(tenant: string, nowMs: number): Promise<SpendWindow[]>;
  /**
   * Deletes the receipts of calls recorded before `cutoffMs` (every tenant),
   * a batch at a time; returns how many. A `callId` whose receipt is gone
   * counts again when it is sent again.
   */
  pruneReceipts(cutoffMs: number): Promise<number>;
}

/**
 * Receipts deleted per store operation by {@link SpendRepository.pruneReceipts}: small enough that
 * one batch holds the embedded store's write lock (and the event loop) for a few milliseconds, the
 * service's calls running between batches.
 */
export const RECEIPT_PRUNE_BATCH = 250;

/** The index that finds expired receipts without reading the live ones. */
export const RECEIPT_INDEX = { recorded_at: 1 } as const;

const idOf = (tenant: string, tier: string, period: BudgetPeriod, start: string) =>
  JSON.stringify([tenant, tier, period, start]);

function empty(tier: string, period: BudgetPeriod, start: string): SpendWindow {
  return { tier, period, period_start: start, spent_usd: 0, tokens_in: 0, tokens_out: 0, calls: 0 };
}

function toWindow(doc: SpendDocument): SpendWindow {
  const { tier, period, period_start, spent_usd, tokens_in, tokens_out, calls } = doc;
  return { tier, period, period_start, spent_usd, tokens_in, tokens_out, calls };
}

/** The store-backed spend repository (collections `spend` and `cost_calls`). */
export function createSpendRepository(store: Store): SpendRepository {
  const spend = store.collection<SpendDocument>('spend');
  const calls = store.collection<CostCallDocument>('cost_calls');

  const repository: SpendRepository = {
    async add(tenant, tier, amounts, nowMs, callId) {
      const at = new Date(nowMs).toISOString();
      if (callId !== undefined) {
        try {
          await calls.insertOne({ _id: JSON.stringify([tenant, callId]), tenant, recorded_at: at });
        } catch (error) {
          if (!isDuplicateKeyError(error)) throw error;
          const windows = await Promise.all(BUDGET_PERIODS.map((p) => repository.current(tenant, tier, p, nowMs)));
          return { windows, duplicate: true };
        }
      }
      const windows = await Promise.all(
        BUDGET_PERIODS.map(async (period) => {
          const start = periodStart(period, nowMs);
          const doc = await spend.findOneAndUpdate(
            { _id: idOf(tenant, tier, period, start) },
            {
              $setOnInsert: { tenant, tier, period, period_start: start },
              $inc: {
                spent_usd: amounts.cost_usd,
                tokens_in: amounts.tokens_in,
                tokens_out: amounts.tokens_out,
                calls: 1,
              },
              $set: { updated_at: at },
            },
            { upsert: true, returnDocument: 'after' },
          );
          return doc === null ? empty(tier, period, start) : toWindow(doc);
        }),
      );
      return { windows, duplicate: false };
    },
    async current(tenant, tier, period, nowMs) {
      const start = periodStart(period, nowMs);
      const doc = await spend.findOne({ _id: idOf(tenant, tier, period, start) });
      return doc === null ? empty(tier, period, start) : toWindow(doc);
    },
    async pruneReceipts(cutoffMs) {
      const cutoff = new Date(cutoffMs).toISOString();
      let deleted = 0;
      for (;;) {
        const expired = await calls.find(
          { recorded_at: { $lt: cutoff } },
          { sort: RECEIPT_INDEX, limit: RECEIPT_PRUNE_BATCH, projection: { _id: 1 } },
        );
        if (expired.length === 0) return deleted;
        const { deletedCount } = await calls.deleteMany({ _id: { $in: expired.map((doc) => doc._id) } });
        deleted += deletedCount;
        if (expired.length < RECEIPT_PRUNE_BATCH) return deleted;
      }
    },
    async currentForTenant(tenant, nowMs) {
      const starts = BUDGET_PERIODS.map((period) => ({ period, period_start: periodStart(period, nowMs) }));
      const docs = await spend.find({ tenant, $or: starts }, { sort: { tier: 1, period: 1 } });
      return docs.map(toWindow);
    },
  };
  return repository;
}
