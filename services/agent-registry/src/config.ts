import { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';

/** The agent-registry service's environment: the base variables plus its own. */
export const AgentRegistryConfig = BaseServiceConfig.extend({
  DEFAULT_AGENT_ID: z
    .string()
    .min(1)
    .max(128)
    .default('default')
    .describe(
      'The runtime\'s configured default agent: `_agent.resolve` always accepts it, with the built-in configuration while no revision exists. Must equal the run-executor\'s DEFAULT_AGENT_ID. Default "default".',
    ),
});
export type AgentRegistryConfig = z.infer<typeof AgentRegistryConfig>;
