import type { ErasedSessionMarkers } from '@ars/service-kit';
import type { Logger } from '@ars/telemetry';
import type { MemoryEvents } from '../events.ts';
import type { HealthMonitor } from '../health/health-monitor.ts';
import type { MemoryRepository } from '../store/memory.repository.ts';
import type { TraceRepository } from '../store/trace.repository.ts';

/** Limits read from the config. */
export interface MemoryLimits {
  /** MEMORY_MAX_ITEM_BYTES. */
  readonly maxItemBytes: number;
  /** MEMORY_PROMPT_BUDGET_BYTES. */
  readonly budgetBytes: number;
  /** MEMORY_BLOCK_MAX_BYTES. */
  readonly blockMaxBytes: number;
}

/** What every memory handler works with; built once in `service.ts`. */
export interface MemoryDeps {
  readonly items: MemoryRepository;
  readonly traces: TraceRepository;
  /** Sessions `_memory.erase_session` erased: their session tier takes no write again. */
  readonly erased: ErasedSessionMarkers;
  readonly events: MemoryEvents;
  readonly health: HealthMonitor;
  readonly logger: Logger;
  readonly limits: MemoryLimits;
  readonly now: () => Date;
}

/** Most items the strategy and the health figures consider for one caller. */
export const MAX_SCOPE_ITEMS = 1000;
