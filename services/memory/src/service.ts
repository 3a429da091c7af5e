import { defineService } from '@ars/service-kit';
import { MemoryConfig } from './config.ts';

/**
 * The memory service: memory.*: tenant and caller memory, health and strategy trace.
 * Every registry method it owns answers `unimplemented` until its handler is built.
 */
export const memoryService = defineService({
  name: 'memory',
  version: '0.1.0',
  config: MemoryConfig,
  build: async () => ({ handlers: {} }),
});
