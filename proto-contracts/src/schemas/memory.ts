import { z } from 'zod';
import { Id, Timestamp, filterList, record } from './common.ts';

/** Memory tiers: tenant-wide memory and the caller's memory (per user, per session). */
export const MEMORY_TIERS = ['tenant', 'user', 'session'] as const;
export const MemoryTier = z.enum(MEMORY_TIERS);
export type MemoryTier = z.infer<typeof MemoryTier>;

/** A memory key: 1 to 512 characters. */
export const MemoryKey = z.string().min(1).max(512);

/** One memory item. `value` is any JSON value. */
export const MemoryItem = record({
  key: z.string(),
  tier: MemoryTier,
  value: z.unknown(),
  tenant: z.string(),
  user: z.string().optional().describe('user and session tiers'),
  session: z.string().optional().describe('session tier'),
  size_bytes: z.int().nonnegative().describe('UTF-8 JSON size of value'),
  version: z.int().positive().describe('increments on every put'),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type MemoryItem = z.infer<typeof MemoryItem>;

/** Filters of memory.list; `tenant_ids` beyond the caller's needs admin or console:fleet. */
export const MemoryListFilter = z.strictObject({
  tier: MemoryTier.optional(),
  prefix: z.string().min(1).max(512).optional(),
  tenant_ids: filterList(Id).optional(),
});
export type MemoryListFilter = z.infer<typeof MemoryListFilter>;

/** Health values of the memory service. */
export const MemoryHealth = z.enum(['healthy', 'degraded', 'unavailable']);
export type MemoryHealth = z.infer<typeof MemoryHealth>;

/** One entry of a memory strategy trace: what the planner admitted or dropped, and why. */
export const StrategyTraceEntry = record({
  occurred_at: Timestamp,
  task_id: z.string().optional(),
  strategy: z.string(),
  tier: z.string(),
  key: z.string().optional(),
  action: z.string().describe('admitted | dropped | truncated | …'),
  bytes: z.int().nonnegative().optional(),
  reason: z.string().optional(),
});
export type StrategyTraceEntry = z.infer<typeof StrategyTraceEntry>;

export type MemoryKey = z.infer<typeof MemoryKey>;
