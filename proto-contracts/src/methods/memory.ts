import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import { Id, Timestamp, pageOf, pageRequest, record, requestOf } from '../schemas/common.ts';
import {
  MemoryHealth,
  MemoryItem,
  MemoryKey,
  MemoryListFilter,
  MemoryTier,
  StrategyTraceEntry,
} from '../schemas/memory.ts';
import { onFamily } from './routing.ts';

/** memory.put (admin): write one item; `if_version` makes it a compare-and-set (`conflict` on mismatch). */
export const MemoryPutRequest = requestOf({
  tier: MemoryTier,
  key: MemoryKey,
  value: z.unknown().describe('any JSON value'),
  if_version: z.int().nonnegative().optional().describe('expected current version; 0: must not exist'),
});
export type MemoryPutRequest = z.infer<typeof MemoryPutRequest>;

/** The item as stored. */
export const MemoryPutResponse = record({ item: MemoryItem });
export type MemoryPutResponse = z.infer<typeof MemoryPutResponse>;

/** memory.get: one item (`not_found` when absent). */
export const MemoryGetRequest = requestOf({ tier: MemoryTier, key: MemoryKey });
export type MemoryGetRequest = z.infer<typeof MemoryGetRequest>;

/** The item. */
export const MemoryGetResponse = record({ item: MemoryItem });
export type MemoryGetResponse = z.infer<typeof MemoryGetResponse>;

/** memory.list: items in scope; `filter.tenant_ids` beyond the caller's needs admin or console:fleet. */
export const MemoryListRequest = requestOf({ filter: MemoryListFilter.optional(), ...pageRequest });
export type MemoryListRequest = z.infer<typeof MemoryListRequest>;

/** A page of items, by key. */
export const MemoryListResponse = record({ ...pageOf(MemoryItem) });
export type MemoryListResponse = z.infer<typeof MemoryListResponse>;

/** memory.delete (admin): one item. */
export const MemoryDeleteRequest = requestOf({ tier: MemoryTier, key: MemoryKey });
export type MemoryDeleteRequest = z.infer<typeof MemoryDeleteRequest>;

/** Whether something was deleted. */
export const MemoryDeleteResponse = record({ tier: MemoryTier, key: z.string(), deleted: z.boolean() });
export type MemoryDeleteResponse = z.infer<typeof MemoryDeleteResponse>;

/** memory.health: only `identity`. */
export const MemoryHealthRequest = requestOf({});
export type MemoryHealthRequest = z.infer<typeof MemoryHealthRequest>;

/** Health of the memory service and the size of the caller's memory. */
export const MemoryHealthResponse = record({
  health: MemoryHealth,
  reason: z.string().optional(),
  item_count: z.int().nonnegative(),
  size_bytes: z.int().nonnegative(),
  checked_at: Timestamp,
});
export type MemoryHealthResponse = z.infer<typeof MemoryHealthResponse>;

/** memory.strategy_trace: what the planner admitted or dropped from memory, optionally for one run. */
export const MemoryStrategyTraceRequest = requestOf({ run: Id.optional(), ...pageRequest });
export type MemoryStrategyTraceRequest = z.infer<typeof MemoryStrategyTraceRequest>;

/** A page of trace entries in the order the planner considered them. */
export const MemoryStrategyTraceResponse = record({ ...pageOf(StrategyTraceEntry) });
export type MemoryStrategyTraceResponse = z.infer<typeof MemoryStrategyTraceResponse>;

/** Memory methods (memory service): `/v1/memory/<name>`. */
export const MEMORY_METHODS: readonly MethodDef[] = [
  defineMethod({
    name: 'memory.delete',
    family: 'memory',
    ...onFamily('memory.delete'),
    service: 'memory',
    auth: ['M', 'A'],
    requestName: 'MemoryDeleteRequest',
    responseName: 'MemoryDeleteResponse',
    request: MemoryDeleteRequest,
    response: MemoryDeleteResponse,
    summary: 'Delete a memory item (admin).',
  }),
  defineMethod({
    name: 'memory.get',
    family: 'memory',
    ...onFamily('memory.get'),
    service: 'memory',
    auth: ['R'],
    requestName: 'MemoryGetRequest',
    responseName: 'MemoryGetResponse',
    request: MemoryGetRequest,
    response: MemoryGetResponse,
    summary: 'Read a memory item.',
  }),
  defineMethod({
    name: 'memory.health',
    family: 'memory',
    ...onFamily('memory.health'),
    service: 'memory',
    auth: ['R'],
    requestName: 'MemoryHealthRequest',
    responseName: 'MemoryHealthResponse',
    request: MemoryHealthRequest,
    response: MemoryHealthResponse,
    summary: 'Read the health of the memory service.',
  }),
  defineMethod({
    name: 'memory.list',
    family: 'memory',
    ...onFamily('memory.list'),
    service: 'memory',
    auth: ['R', 'X'],
    requestName: 'MemoryListRequest',
    responseName: 'MemoryListResponse',
    request: MemoryListRequest,
    response: MemoryListResponse,
    summary: 'List memory items (admin or console:fleet fan-in).',
  }),
  defineMethod({
    name: 'memory.put',
    family: 'memory',
    ...onFamily('memory.put'),
    service: 'memory',
    auth: ['M', 'A'],
    requestName: 'MemoryPutRequest',
    responseName: 'MemoryPutResponse',
    request: MemoryPutRequest,
    response: MemoryPutResponse,
    summary: 'Write a memory item (admin).',
  }),
  defineMethod({
    name: 'memory.strategy_trace',
    family: 'memory',
    ...onFamily('memory.strategy_trace'),
    service: 'memory',
    auth: ['R'],
    requestName: 'MemoryStrategyTraceRequest',
    responseName: 'MemoryStrategyTraceResponse',
    request: MemoryStrategyTraceRequest,
    response: MemoryStrategyTraceResponse,
    summary: 'Trace what the planner admitted or dropped from memory.',
  }),
];
