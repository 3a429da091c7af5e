import { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';

const positiveInt = () => z.coerce.number().int().positive();

/** The memory service's environment: the base variables plus its own. */
export const MemoryConfig = BaseServiceConfig.extend({
  MEMORY_MAX_ITEM_BYTES: positiveInt()
    .default(64 * 1024)
    .describe('Largest memory value accepted, in bytes of its JSON text; larger is payload_too_large. Default 65536.'),
  MEMORY_PROMPT_BUDGET_BYTES: positiveInt()
    .default(8 * 1024)
    .describe('Bytes of memory blocks the planner admits into one prompt (caller_memory strategy). Default 8192.'),
  MEMORY_BLOCK_MAX_BYTES: positiveInt()
    .default(2 * 1024)
    .describe('Largest single memory block the planner admits, in bytes; larger blocks are dropped. Default 2048.'),
  MEMORY_HEALTH_INTERVAL_MS: positiveInt()
    .default(30_000)
    .describe('Milliseconds between background health checks (memory.health_changed on a flip). Default 30000.'),
  MEMORY_HEALTH_SLOW_MS: positiveInt()
    .default(1_000)
    .describe('A store probe slower than this many milliseconds reports the service degraded. Default 1000.'),
});
export type MemoryConfig = z.infer<typeof MemoryConfig>;
