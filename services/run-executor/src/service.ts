import { defineService } from '@ars/service-kit';
import { RunExecutorConfig } from './config.ts';

/**
 * The run-executor service: start, the nine steering controls, tasks.*, pause.list, search.tasks, runs.set_overrides and flows.*; runs the planner loop on the RUNS work queue.
 * Every registry method it owns answers `unimplemented` until its handler is built.
 */
export const runExecutorService = defineService({
  name: 'run-executor',
  version: '0.1.0',
  config: RunExecutorConfig,
  build: async () => ({ handlers: {} }),
});
