import { ServiceError, MemoryStrategyTraceRequest } from '@ars/contracts';
import type { MemoryStrategyTraceResponse, StrategyTraceEntry } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { Owner } from '../domain/memory-record.ts';
import { CALLER_MEMORY_STRATEGY, planCallerMemory } from '../domain/strategy.ts';
import type { StrategyPlan } from '../domain/strategy.ts';
import type { TraceRecord } from '../store/trace.repository.ts';
import type { MemoryDeps } from './deps.ts';
import { MAX_SCOPE_ITEMS } from './deps.ts';
import { targetFor } from './identity.ts';
import { typedMethod } from '@ars/service-kit';

/** The caller's memory as the strategy would load it now. */
export async function planFor(deps: MemoryDeps, owner: Owner): Promise<StrategyPlan> {
  const records = await deps.items.all({ kind: 'own', owner }, MAX_SCOPE_ITEMS);
  return planCallerMemory(records, { budgetBytes: deps.limits.budgetBytes, blockMaxBytes: deps.limits.blockMaxBytes });
}

/** A plan's decisions as trace entries, in prompt order. */
export function traceEntries(plan: StrategyPlan, occurredAt: string, run?: string): StrategyTraceEntry[] {
  return plan.decisions.map((decision) => ({
    occurred_at: occurredAt,
    ...(run === undefined ? {} : { task_id: run }),
    strategy: CALLER_MEMORY_STRATEGY,
    tier: decision.tier,
    key: decision.key,
    action: decision.action,
    bytes: decision.bytes,
    reason: decision.reason,
  }));
}

function fromRecord(record: TraceRecord): StrategyTraceEntry {
  const { occurred_at, run, strategy, tier, key, action, bytes, reason } = record;
  return { occurred_at, task_id: run, strategy, tier, key, action, bytes, reason };
}

function decodeOffset(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const offset = Number.parseInt(Buffer.from(cursor, 'base64url').toString('utf8').replace(/^o:/, ''), 10);
  if (!Number.isSafeInteger(offset) || offset < 0 || Buffer.from(`o:${offset}`).toString('base64url') !== cursor) {
    throw new ServiceError('invalid_request', 'cursor: not a cursor of this trace');
  }
  return offset;
}

/** One page of an in-memory list, with an offset cursor. */
function pageOfList<T>(all: readonly T[], limit: number, cursor: string | undefined) {
  const offset = decodeOffset(cursor);
  const items = all.slice(offset, offset + limit);
  const next = offset + limit;
  return next < all.length ? { items, next_cursor: Buffer.from(`o:${next}`).toString('base64url') } : { items };
}

/**
 * memory.strategy_trace: what the planner's caller_memory strategy loads for
 * the caller and why (tier, key, bytes, admitted or dropped with the reason),
 * in prompt order. With `run`: what was recorded for that run of the caller's
 * (by `_memory.prompt_blocks`); without: what it would load now.
 */
export function createStrategyTraceHandler(deps: MemoryDeps): RpcHandler {
  return typedMethod(
    MemoryStrategyTraceRequest,
    async ({ method, identity: verified, body: request }): Promise<MemoryStrategyTraceResponse> => {
      const target = await targetFor(deps, method, verified, request.identity);
      if (request.run !== undefined) {
        const page = await deps.traces.page(request.run, target, request.limit, request.cursor);
        return {
          items: page.items.map(fromRecord),
          ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
        };
      }
      const plan = await planFor(deps, target);
      return pageOfList(traceEntries(plan, deps.now().toISOString()), request.limit, request.cursor);
    },
  );
}
