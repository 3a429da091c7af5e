import { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';

/** The run-executor service's environment: the base variables plus its own. */
export const RunExecutorConfig = BaseServiceConfig.extend({
  EXECUTOR_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024)
    .default(8)
    .describe("Runs this replica executes at once (the RUNS pull consumer's max in flight). Default 8."),
  DEFAULT_AGENT_ID: z
    .string()
    .min(1)
    .default('default')
    .describe(
      'The runtime\'s configured default agent: bound when start names no agent_id, and always accepted as an agent_id. Default "default".',
    ),
});
export type RunExecutorConfig = z.infer<typeof RunExecutorConfig>;
