import { ServiceError } from '@ars/contracts';
import type { BudgetPeriod } from '@ars/contracts';
import { isDuplicateKeyError } from '@ars/store';
import type { Filter, Store, StoreDocument, Update } from '@ars/store';
import { BUDGET_PERIODS, periodStart } from '../domain/periods.ts';

/** The totals of one window of one period. */
interface WindowTotals {
  start: string;
  spent_usd: number;
  tokens_in: number;
  tokens_out: number;
  calls: number;
}

/**
 * Spend of (tenant, tier): the current window of every period in one document, so that a call's cost
 * is one read and one write; `_id` = JSON `[tenant, tier]`. A window moves forward when a call falls
 * in a later one (the earlier window's totals are dropped: nothing reads past windows).
 */
interface SpendWindowsDocument extends StoreDocument {
  tenant: string;
  tier: string;
  windows: Record<BudgetPeriod, WindowTotals>;
  updated_at: string;
}

/**
 * The layout before 2026-11-27: one document per (tenant, tier, period, window start), `_id` = JSON
 * `[tenant, tier, period, period_start]`, collection `spend`. Read once per (tenant, tier) to seed its
 * windows document, and by the reads while a (tenant, tier) has none yet; never written any more.
 */
interface LegacySpendDocument extends StoreDocument {
  tenant: string;
  tier: string;
  period: BudgetPeriod;
  period_start: string;
  spent_usd: number;
  tokens_in: number;
  tokens_out: number;
  calls: number;
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

/** One LLM call's cost, or the sum of several calls' (`calls` of them). */
export interface CostAmounts {
  readonly cost_usd: number;
  readonly tokens_in: number;
  readonly tokens_out: number;
  /** How many calls the amounts sum. @default 1 */
  readonly calls?: number;
}

/** One call of {@link SpendRepository.addCalls}. */
export interface TieredCall {
  readonly tier: string;
  readonly amounts: CostAmounts;
  readonly callId?: string | undefined;
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
  /**
   * Adds several calls of the tenant: each `callId` recorded before is left
   * out, and the others are added with one write per tier.
   */
  addCalls(
    tenant: string,
    calls: readonly TieredCall[],
    nowMs: number,
  ): Promise<{ readonly recorded: number; readonly duplicates: number }>;
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

/** Reads of a (tenant, tier)'s windows while others move them, before a call is refused as contended. */
const MAX_MOVE_ATTEMPTS = 16;

/**
 * Receipts deleted per store operation by {@link SpendRepository.pruneReceipts}: small enough that
 * one batch holds the embedded store's write lock (and the event loop) for a few milliseconds, the
 * service's calls running between batches.
 */
export const RECEIPT_PRUNE_BATCH = 250;

/** The index that finds expired receipts without reading the live ones. */
export const RECEIPT_INDEX = { recorded_at: 1 } as const;

const idOf = (tenant: string, tier: string) => JSON.stringify([tenant, tier]);
const legacyIdOf = (tenant: string, tier: string, period: BudgetPeriod, start: string) =>
  JSON.stringify([tenant, tier, period, start]);

const zero = (start: string): WindowTotals => ({ start, spent_usd: 0, tokens_in: 0, tokens_out: 0, calls: 0 });

function empty(tier: string, period: BudgetPeriod, start: string): SpendWindow {
  return { tier, period, period_start: start, spent_usd: 0, tokens_in: 0, tokens_out: 0, calls: 0 };
}

function toWindow(tier: string, period: BudgetPeriod, totals: WindowTotals): SpendWindow {
  const { start, spent_usd, tokens_in, tokens_out, calls } = totals;
  return { tier, period, period_start: start, spent_usd, tokens_in, tokens_out, calls };
}

/** The start of every period's window that contains `nowMs`. */
function startsAt(nowMs: number): Record<BudgetPeriod, string> {
  return Object.fromEntries(BUDGET_PERIODS.map((period) => [period, periodStart(period, nowMs)])) as Record<
    BudgetPeriod,
    string
  >;
}

/**
 * The windows after one call: a window that holds an earlier start than the call's starts afresh; one
 * holding the same or a later start (a call timed before a window another replica already moved on to)
 * takes the call, so no cost is ever dropped.
 */
function withCall(
  windows: Partial<Record<BudgetPeriod, WindowTotals>>,
  starts: Record<BudgetPeriod, string>,
  amounts: CostAmounts,
): Record<BudgetPeriod, WindowTotals> {
  const next = {} as Record<BudgetPeriod, WindowTotals>;
  for (const period of BUDGET_PERIODS) {
    const held = windows[period];
    const base = held === undefined || held.start < starts[period] ? zero(starts[period]) : held;
    next[period] = {
      start: base.start,
      spent_usd: base.spent_usd + amounts.cost_usd,
      tokens_in: base.tokens_in + amounts.tokens_in,
      tokens_out: base.tokens_out + amounts.tokens_out,
      calls: base.calls + (amounts.calls ?? 1),
    };
  }
  return next;
}

/** The `$inc` of one call (or of the calls the amounts sum) on the window of `period`. */
function increments(period: BudgetPeriod, amounts: CostAmounts): Record<string, number> {
  return {
    [`windows.${period}.spent_usd`]: amounts.cost_usd,
    [`windows.${period}.tokens_in`]: amounts.tokens_in,
    [`windows.${period}.tokens_out`]: amounts.tokens_out,
    [`windows.${period}.calls`]: amounts.calls ?? 1,
  };
}

/** The window of `period` containing `nowMs`, from a windows document: zeros when it holds another window. */
function windowAt(doc: SpendWindowsDocument, period: BudgetPeriod, start: string): SpendWindow {
  const held = doc.windows[period];
  return held !== undefined && held.start === start ? toWindow(doc.tier, period, held) : empty(doc.tier, period, start);
}

/** The store-backed spend repository (collections `spend_windows`, `cost_calls`, and `spend` as it was). */
export function createSpendRepository(store: Store): SpendRepository {
  const spend = store.collection<SpendWindowsDocument>('spend_windows');
  const legacy = store.collection<LegacySpendDocument>('spend');
  const calls = store.collection<CostCallDocument>('cost_calls');

  /** The (tenant, tier)'s current windows as the layout before kept them: the seed of its windows document. */
  async function legacyWindows(tenant: string, tier: string, starts: Record<BudgetPeriod, string>) {
    const docs = await Promise.all(
      BUDGET_PERIODS.map((period) => legacy.findOne({ _id: legacyIdOf(tenant, tier, period, starts[period]) })),
    );
    const windows: Partial<Record<BudgetPeriod, WindowTotals>> = {};
    for (const doc of docs) {
      if (doc === null) continue;
      const { period_start: start, spent_usd, tokens_in, tokens_out, calls: count } = doc;
      windows[doc.period] = { start, spent_usd, tokens_in, tokens_out, calls: count };
    }
    return windows;
  }

  /**
   * Adds a call whose windows are not all the document's (the first call of a day or month, or a call
   * timed before a window another replica already moved on to), or to a (tenant, tier) without a
   * document. A window the call is later than starts afresh with it ($set), the others take it ($inc),
   * all on condition that no window moved since the read: concurrent increments commute, and only
   * another move (once per period) makes it read again.
   */
  async function addMovingWindows(tenant: string, tier: string, amounts: CostAmounts, nowMs: number, at: string) {
    const _id = idOf(tenant, tier);
    const starts = startsAt(nowMs);
    for (let attempt = 0; attempt < MAX_MOVE_ATTEMPTS; attempt += 1) {
      const doc = await spend.findOne({ _id });
      if (doc === null) {
        const windows = withCall(await legacyWindows(tenant, tier, starts), starts, amounts);
        try {
          await spend.insertOne({ _id, tenant, tier, windows, updated_at: at });
          return windows;
        } catch (error) {
          if (!isDuplicateKeyError(error)) throw error;
          continue; // another call created it meanwhile
        }
      }
      const filter: Record<string, unknown> = { _id };
      const set: Record<string, unknown> = { updated_at: at };
      const inc: Record<string, number> = {};
      const fresh = withCall({}, starts, amounts);
      for (const period of BUDGET_PERIODS) {
        const held = doc.windows[period];
        filter[`windows.${period}.start`] = held.start;
        if (held.start < starts[period]) set[`windows.${period}`] = fresh[period];
        else Object.assign(inc, increments(period, amounts));
      }
      const updated = await spend.findOneAndUpdate(
        filter as Filter<SpendWindowsDocument>,
        (Object.keys(inc).length === 0 ? { $set: set } : { $set: set, $inc: inc }) as Update<SpendWindowsDocument>,
        { returnDocument: 'after' },
      );
      if (updated !== null) return updated.windows;
    }
    throw new ServiceError('unavailable', 'the spend of this tier is too contended; retry');
  }

  /** Writes the call's receipt; false when it was recorded before. */
  async function firstReceipt(tenant: string, callId: string, at: string): Promise<boolean> {
    try {
      await calls.insertOne({ _id: JSON.stringify([tenant, callId]), tenant, recorded_at: at });
      return true;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      return false;
    }
  }

  /** Adds the amounts to every current window: one increment of all three (all calls but a period's first). */
  async function addToWindows(tenant: string, tier: string, amounts: CostAmounts, nowMs: number, at: string) {
    const starts = startsAt(nowMs);
    const filter: Record<string, unknown> = { _id: idOf(tenant, tier) };
    const inc: Record<string, number> = {};
    for (const period of BUDGET_PERIODS) {
      filter[`windows.${period}.start`] = starts[period];
      Object.assign(inc, increments(period, amounts));
    }
    const doc = await spend.findOneAndUpdate(
      filter as Filter<SpendWindowsDocument>,
      { $inc: inc, $set: { updated_at: at } } as Update<SpendWindowsDocument>,
      { returnDocument: 'after' },
    );
    return doc === null ? await addMovingWindows(tenant, tier, amounts, nowMs, at) : doc.windows;
  }

  const repository: SpendRepository = {
    async addCalls(tenant, tieredCalls, nowMs) {
      const at = new Date(nowMs).toISOString();
      interface TierSum {
        readonly tier: string;
        cost_usd: number;
        tokens_in: number;
        tokens_out: number;
        calls: number;
        readonly receipts: string[];
      }
      const byTier = new Map<string, TierSum>();
      let duplicates = 0;
      for (const call of tieredCalls) {
        if (call.callId !== undefined && !(await firstReceipt(tenant, call.callId, at))) {
          duplicates += 1;
          continue;
        }
        const sum = byTier.get(call.tier) ?? {
          tier: call.tier,
          cost_usd: 0,
          tokens_in: 0,
          tokens_out: 0,
          calls: 0,
          receipts: [],
        };
        sum.cost_usd += call.amounts.cost_usd;
        sum.tokens_in += call.amounts.tokens_in;
        sum.tokens_out += call.amounts.tokens_out;
        sum.calls += call.amounts.calls ?? 1;
        if (call.callId !== undefined) sum.receipts.push(JSON.stringify([tenant, call.callId]));
        byTier.set(call.tier, sum);
      }
      const pending = [...byTier.values()];
      try {
        for (let next = pending[0]; next !== undefined; next = pending[0]) {
          await addToWindows(tenant, next.tier, next, nowMs, at);
          pending.shift();
        }
      } catch (error) {
        // The receipts of costs not added would make the request's retry a duplicate: they go (a tier added before
        // the failure keeps its receipts, so the retry does not add it twice).
        const orphaned = pending.flatMap((sum) => sum.receipts);
        await calls.deleteMany({ _id: { $in: orphaned } }).catch(() => undefined);
        throw error;
      }
      return { recorded: tieredCalls.length - duplicates, duplicates };
    },
    async add(tenant, tier, amounts, nowMs, callId) {
      const at = new Date(nowMs).toISOString();
      if (callId !== undefined) {
        if (!(await firstReceipt(tenant, callId, at))) {
          // The windows as they are: one read of the document (the old layout's only when it has none).
          const doc = await spend.findOne({ _id: idOf(tenant, tier) });
          const starts = startsAt(nowMs);
          const windows =
            doc === null
              ? await Promise.all(BUDGET_PERIODS.map((p) => repository.current(tenant, tier, p, nowMs)))
              : BUDGET_PERIODS.map((p) => windowAt(doc, p, starts[p]));
          return { windows, duplicate: true };
        }
      }
      const windows = await addToWindows(tenant, tier, amounts, nowMs, at);
      return { windows: BUDGET_PERIODS.map((period) => toWindow(tier, period, windows[period])), duplicate: false };
    },
    async current(tenant, tier, period, nowMs) {
      const start = periodStart(period, nowMs);
      const doc = await spend.findOne({ _id: idOf(tenant, tier) });
      if (doc !== null) return windowAt(doc, period, start);
      const old = await legacy.findOne({ _id: legacyIdOf(tenant, tier, period, start) });
      return old === null ? empty(tier, period, start) : toWindow(tier, period, { ...old, start: old.period_start });
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
      const starts = startsAt(nowMs);
      const current = await spend.find({ tenant }, { sort: { tier: 1 } });
      const windows = current.flatMap((doc) =>
        BUDGET_PERIODS.map((period) => windowAt(doc, period, starts[period])).filter((w) => w.calls > 0),
      );
      // Tiers spent in only before the windows documents (until their next call seeds one).
      const seeded = new Set(current.map((doc) => doc.tier));
      const old = await legacy.find(
        { tenant, $or: BUDGET_PERIODS.map((period) => ({ period, period_start: starts[period] })) },
        { sort: { tier: 1, period: 1 } },
      );
      for (const doc of old) {
        if (!seeded.has(doc.tier)) windows.push(toWindow(doc.tier, doc.period, { ...doc, start: doc.period_start }));
      }
      return windows.sort((a, b) => (a.tier === b.tier ? a.period.localeCompare(b.period) : a.tier < b.tier ? -1 : 1));
    },
  };
  return repository;
}
