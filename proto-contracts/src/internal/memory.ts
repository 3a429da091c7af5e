import { z } from 'zod';
import { defineInternalEndpoint } from '../internal-def.ts';
import { Id } from '../schemas/common.ts';
import { MemoryItem, MemoryKey, StrategyTraceEntry } from '../schemas/memory.ts';
import { Count, OwnerTriple, tripleShape } from './shapes.ts';

/** `_memory.prompt_blocks`: whose memory, and the run it is for (recorded for memory.strategy_trace). */
export const MemoryPromptBlocksRequest = z.strictObject({ ...tripleShape, run: Id.optional() });
export type MemoryPromptBlocksRequest = z.infer<typeof MemoryPromptBlocksRequest>;

/** One memory item rendered as a prompt block. */
export const MemoryBlock = z.object({
  tier: z.string(),
  key: z.string(),
  text: z.string().describe('`<key>: <value>` (string values verbatim, others as JSON)'),
  bytes: Count.describe('UTF-8 bytes of text'),
});
export type MemoryBlock = z.infer<typeof MemoryBlock>;

/** The strategy's admitted blocks in prompt order, and every decision. */
export const MemoryPromptBlocksReply = z.object({
  strategy: z.string(),
  budget_bytes: Count,
  used_bytes: Count,
  blocks: z.array(MemoryBlock),
  trace: z.array(StrategyTraceEntry),
});
export type MemoryPromptBlocksReply = z.infer<typeof MemoryPromptBlocksReply>;

/**
 * `_memory.prompt_blocks`: the caller_memory strategy's blocks for a run's
 * prompt. Publishes `memory.caller_block_admitted` per block and, with
 * `run`, records the trace for memory.strategy_trace.
 */
export const MEMORY_PROMPT_BLOCKS = defineInternalEndpoint({
  name: '_memory.prompt_blocks',
  service: 'memory',
  callers: ['run-executor'],
  gate: 'caller',
  request: MemoryPromptBlocksRequest,
  reply: MemoryPromptBlocksReply,
  refusals: {},
  summary: "the caller's memory blocks for a run's prompt",
});

/** What the erasure removed; `purged` is true when anything was. */
export const MemoryEraseSessionReply = z.object({ purged: z.boolean(), items_deleted: Count, traces_deleted: Count });
export type MemoryEraseSessionReply = z.infer<typeof MemoryEraseSessionReply>;

/** `_memory.erase_session`: part of the erasure cascade of sessions.delete. Idempotent. */
export const MEMORY_ERASE_SESSION = defineInternalEndpoint({
  name: '_memory.erase_session',
  service: 'memory',
  callers: ['session'],
  gate: 'caller',
  request: OwnerTriple,
  reply: MemoryEraseSessionReply,
  refusals: {},
  summary: "erases a session's memory tier and strategy traces",
});

/** `_memory.caller_read`: one key of the caller's memory. */
export const MemoryCallerReadRequest = z.strictObject({ ...tripleShape, key: MemoryKey });
export type MemoryCallerReadRequest = z.infer<typeof MemoryCallerReadRequest>;

/** The item, or null. */
export const MemoryCallerReadReply = z.object({ item: MemoryItem.nullable() });
export type MemoryCallerReadReply = z.infer<typeof MemoryCallerReadReply>;

/**
 * `_memory.caller_read`: the run's memory tool reading the caller's own
 * (tenant, user) tier first, then the tenant tier.
 */
export const MEMORY_CALLER_READ = defineInternalEndpoint({
  name: '_memory.caller_read',
  service: 'memory',
  callers: ['run-executor'],
  gate: 'caller',
  request: MemoryCallerReadRequest,
  reply: MemoryCallerReadReply,
  refusals: {},
  summary: "reads one key of the caller's memory",
});

/** `_memory.caller_write`: one key of the caller's own (tenant, user) memory; `value` is any JSON value. */
export const MemoryCallerWriteRequest = z.strictObject({ ...tripleShape, key: MemoryKey, value: z.unknown() });
export type MemoryCallerWriteRequest = z.infer<typeof MemoryCallerWriteRequest>;

/** The item as written. */
export const MemoryCallerWriteReply = z.object({ item: MemoryItem });
export type MemoryCallerWriteReply = z.infer<typeof MemoryCallerWriteReply>;

/**
 * `_memory.caller_write`: the run's memory tool writing the caller's own
 * (tenant, user) tier; publishes `memory.item_put`.
 */
export const MEMORY_CALLER_WRITE = defineInternalEndpoint({
  name: '_memory.caller_write',
  service: 'memory',
  callers: ['run-executor'],
  gate: 'caller',
  request: MemoryCallerWriteRequest,
  reply: MemoryCallerWriteReply,
  refusals: {},
  summary: "writes one key of the caller's own memory",
});
