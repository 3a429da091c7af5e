import type { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';

/** The agent-registry service's environment: the base variables; none of its own yet. */
export const AgentRegistryConfig = BaseServiceConfig.extend({});
export type AgentRegistryConfig = z.infer<typeof AgentRegistryConfig>;
