import { defineService } from '@ars/service-kit';
import { AgentRegistryConfig } from './config.ts';

/**
 * The agent-registry service: agent_config.* (revisions, tiers, skills), agents.* (fleet registry and control), tools.* and mcp.*.
 * Every registry method it owns answers `unimplemented` until its handler is built.
 */
export const agentRegistryService = defineService({
  name: 'agent-registry',
  version: '0.1.0',
  config: AgentRegistryConfig,
  build: async () => ({ handlers: {} }),
});
