import { MEMORY_PROMPT_BLOCKS } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { CALLER_MEMORY_STRATEGY } from '../domain/strategy.ts';
import type { MemoryDeps } from '../handlers/deps.ts';
import { planFor, traceEntries } from '../handlers/strategy-trace.handler.ts';

/**
 * `_memory.prompt_blocks {tenant, user, session, run?}` → `{strategy,
 * budget_bytes, used_bytes, blocks, trace}` for the run engine's prompt:
 * the caller_memory strategy's admitted blocks (`{tier, key, text, bytes}`,
 * prompt order) and every decision. Publishes `memory.caller_block_admitted`
 * per admitted block and, with `run`, records the trace for memory.strategy_trace.
 */
export function createPromptBlocksHandler(deps: MemoryDeps): InternalHandler {
  return serveInternal(MEMORY_PROMPT_BLOCKS, async ({ body: request }) => {
    const owner = { tenant: request.tenant, user: request.user, session: request.session };
    const plan = await planFor(deps, owner);
    const now = deps.now();
    const trace = traceEntries(plan, now.toISOString(), request.run);
    if (request.run !== undefined) {
      await deps.traces.record(
        request.run,
        owner,
        now,
        trace.map(({ strategy, tier, key, action, bytes, reason }) => ({
          strategy,
          tier,
          key: key ?? '',
          action,
          bytes: bytes ?? 0,
          reason: reason ?? '',
        })),
      );
    }
    for (const block of plan.blocks) {
      await deps.events.callerBlockAdmitted({ ...owner, run: request.run }, block);
    }
    return {
      strategy: CALLER_MEMORY_STRATEGY,
      budget_bytes: plan.budgetBytes,
      used_bytes: plan.usedBytes,
      blocks: [...plan.blocks],
      trace,
    };
  });
}
