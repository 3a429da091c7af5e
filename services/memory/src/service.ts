import { createTenantUsageHandler } from './internal/tenant-usage.handler.ts';
import { createErasedSessionMarkers, defineService } from '@ars/service-kit';
import { MemoryConfig } from './config.ts';
import { createMemoryEvents } from './events.ts';
import type { MemoryDeps } from './handlers/deps.ts';
import { createHealthHandler } from './handlers/health.handler.ts';
import { createDeleteHandler, createGetHandler, createPutHandler } from './handlers/item.handlers.ts';
import { createListHandler } from './handlers/list.handler.ts';
import { createStrategyTraceHandler } from './handlers/strategy-trace.handler.ts';
import { createHealthMonitor } from './health/health-monitor.ts';
import { createCallerReadHandler, createCallerWriteHandler } from './internal/caller-memory.handlers.ts';
import { createEraseSessionHandler } from './internal/erase-session.handler.ts';
import { createPromptBlocksHandler } from './internal/prompt-blocks.handler.ts';
import { createMemoryRepository } from './store/memory.repository.ts';
import { createTraceRepository } from './store/trace.repository.ts';

/**
 * The memory service: memory.* (tenant, user and session tiers; health;
 * strategy trace) and the caller_memory capability. Internal endpoints:
 * `_memory.prompt_blocks` (the planner's memory blocks), `_memory.erase_session`,
 * and `_memory.caller_read` / `_memory.caller_write` (the run's memory tool).
 * At boot every stored record is checked; corrupt ones are dropped
 * (`memory.recovery_dropped`) and the health reflects it.
 */
export const memoryService = defineService({
  name: 'memory',
  version: '0.1.0',
  config: MemoryConfig,
  build: async ({ config, store, logger, publisher }) => {
    const events = createMemoryEvents(publisher, logger);
    // The monitor probes through the repository; the repository reports corrupt records to the monitor.
    const health = createHealthMonitor({
      probe: () => items.probe(),
      events,
      logger,
      slowMs: config.MEMORY_HEALTH_SLOW_MS,
    });
    const items = createMemoryRepository(store, async ({ id, reason }) => {
      logger.warn({ recordId: id, reason }, 'corrupt memory record dropped');
      health.noteDropped(1);
      await events.recoveryDropped(`memory record ${id} dropped: ${reason}`);
    });
    const traces = createTraceRepository(store);
    await items.ensureIndexes();
    await traces.ensureIndexes();

    const dropped = await items.recover();
    if (dropped > 0) logger.warn({ dropped }, 'memory recovery dropped corrupt records');
    await health.check();
    const stopHealth = health.every(config.MEMORY_HEALTH_INTERVAL_MS);

    const deps: MemoryDeps = {
      items,
      traces,
      erased: createErasedSessionMarkers(store),
      events,
      health,
      logger,
      limits: {
        maxItemBytes: config.MEMORY_MAX_ITEM_BYTES,
        budgetBytes: config.MEMORY_PROMPT_BUDGET_BYTES,
        blockMaxBytes: config.MEMORY_BLOCK_MAX_BYTES,
      },
      now: () => new Date(),
    };
    return {
      handlers: {
        'memory.put': createPutHandler(deps),
        'memory.get': createGetHandler(deps),
        'memory.delete': createDeleteHandler(deps),
        'memory.list': createListHandler(deps),
        'memory.health': createHealthHandler(deps),
        'memory.strategy_trace': createStrategyTraceHandler(deps),
      },
      internalHandlers: [
        createPromptBlocksHandler(deps),
        createEraseSessionHandler(deps),
        createCallerReadHandler(deps),
        createCallerWriteHandler(deps),
        createTenantUsageHandler(deps),
      ],
      metadata: { capabilities: 'caller_memory', memory_strategy: 'caller_memory' },
      stop: stopHealth,
    };
  },
});
