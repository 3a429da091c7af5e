import type { MemoryTier } from '@ars/contracts';
import type { MemoryRecord } from './memory-record.ts';

/** The planner's memory strategy: the caller's memory blocks under a byte budget. */
export const CALLER_MEMORY_STRATEGY = 'caller_memory';

/** Prompt order: tenant-wide first, then the caller's user, then the session; more specific blocks refine earlier ones. */
const PROMPT_ORDER: readonly MemoryTier[] = ['tenant', 'user', 'session'];
/** Admission priority under the budget: the most specific memory is kept first. */
const ADMISSION_ORDER: readonly MemoryTier[] = ['session', 'user', 'tenant'];

/** Limits of the strategy. */
export interface StrategyLimits {
  /** Total bytes of admitted blocks. */
  readonly budgetBytes: number;
  /** Largest single block. */
  readonly blockMaxBytes: number;
}

/** One memory item rendered as a prompt block. */
export interface MemoryBlock {
  readonly tier: MemoryTier;
  readonly key: string;
  /** `<key>: <value>` (string values verbatim, others as JSON). */
  readonly text: string;
  /** UTF-8 bytes of `text`. */
  readonly bytes: number;
}

/** What the strategy did with one block, and why. */
export interface StrategyDecision extends MemoryBlock {
  readonly action: 'admitted' | 'dropped';
  readonly reason: string;
}

/** The strategy's outcome: admitted blocks and every decision, both in prompt order. */
export interface StrategyPlan {
  readonly blocks: readonly MemoryBlock[];
  readonly decisions: readonly StrategyDecision[];
  readonly usedBytes: number;
  readonly budgetBytes: number;
}

/** Renders a record as a block. */
export function toBlock(record: Pick<MemoryRecord, 'tier' | 'key' | 'value_json'>): MemoryBlock {
  const value = JSON.parse(record.value_json) as unknown;
  const text = `${record.key}: ${typeof value === 'string' ? value : record.value_json}`;
  return { tier: record.tier, key: record.key, text, bytes: Buffer.byteLength(text) };
}

function byTierThenKey(order: readonly MemoryTier[]) {
  return (a: MemoryBlock, b: MemoryBlock) =>
    order.indexOf(a.tier) - order.indexOf(b.tier) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/**
 * The caller_memory strategy. Candidates are the tenant tier, the caller's
 * (tenant, user) tier and the caller's session tier. Blocks are admitted most
 * specific first (session, user, tenant; by key) while they fit the budget; a
 * block over the per-block maximum is dropped. The result lists blocks and
 * decisions in prompt order (tenant, user, session; by key).
 */
export function planCallerMemory(records: readonly MemoryRecord[], limits: StrategyLimits): StrategyPlan {
  const candidates = records.map(toBlock).sort(byTierThenKey(ADMISSION_ORDER));
  let used = 0;
  const decisions: StrategyDecision[] = [];
  for (const block of candidates) {
    if (block.bytes > limits.blockMaxBytes) {
      const reason = `block of ${block.bytes} bytes exceeds the ${limits.blockMaxBytes}-byte block maximum`;
      decisions.push({ ...block, action: 'dropped', reason });
    } else if (used + block.bytes > limits.budgetBytes) {
      const reason = `over budget: needs ${block.bytes} bytes, ${limits.budgetBytes - used} of ${limits.budgetBytes} left`;
      decisions.push({ ...block, action: 'dropped', reason });
    } else {
      used += block.bytes;
      const reason = `${block.tier} tier, within the ${limits.budgetBytes}-byte budget`;
      decisions.push({ ...block, action: 'admitted', reason });
    }
  }
  decisions.sort(byTierThenKey(PROMPT_ORDER));
  const blocks = decisions
    .filter((d) => d.action === 'admitted')
    .map(({ tier, key, text, bytes }) => ({ tier, key, text, bytes }));
  return { blocks, decisions, usedBytes: used, budgetBytes: limits.budgetBytes };
}
