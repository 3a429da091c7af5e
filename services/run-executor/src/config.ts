import { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';
import { ENGINE_CONFIG_SHAPE } from './engine/engine-config.ts';

/** The run-executor service's environment: the base variables plus its own. */
export const RunExecutorConfig = BaseServiceConfig.extend({
  EXECUTOR_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024)
    .default(32)
    .describe(
      "Runs this replica executes at once (the RUNS pull consumer's max in flight). Default 32: a run mostly waits on its LLM and tools.",
    ),
  DEFAULT_AGENT_ID: z
    .string()
    .min(1)
    .default('default')
    .describe(
      'The runtime\'s configured default agent: bound when start names no agent_id, and always accepted as an agent_id. Default "default".',
    ),
  CONTROL_REPLY_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(60_000)
    .default(2_000)
    .describe("How long a steering control waits for the run's live inbox to acknowledge it, in ms. Default 2000."),
  DEPENDENCY_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(60_000)
    .default(5_000)
    .describe('How long start waits for the session, agent-registry and artifact services, in ms. Default 5000.'),
  FLOWS_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Directory of flow definitions: <tenant>/<flow_id>.yaml|.yml|.json. Unset: no flows (flows.list is empty, flows.run answers not_found).',
    ),
  FLOWS_RELOAD_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(5_000)
    .describe('How often FLOWS_DIR is read again for changed, added and removed files, in ms. Default 5000.'),
  ...ENGINE_CONFIG_SHAPE,
});
export type RunExecutorConfig = z.infer<typeof RunExecutorConfig>;
