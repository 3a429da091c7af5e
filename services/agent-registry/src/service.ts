import { defineService } from '@ars/service-kit';
import { AgentRegistryConfig } from './config.ts';
import { AGENT_RESOLVE, createAgentResolveHandler } from './handlers/agent-resolve.handler.ts';
import { createRevisionHandlers } from './handlers/agent-config-revisions.handler.ts';
import { createRevisionRepository } from './store/revision.repository.ts';

/**
 * The agent-registry service: agent_config.* (revisions, tiers, skills), agents.* (fleet registry and control), tools.* and mcp.*.
 * Built so far: `agent_config.set_revision`, `agent_config.get`, `agent_config.list_revisions` and the internal
 * `_agent.resolve`; every other registry method it owns answers `unimplemented` until its handler is built.
 */
export const agentRegistryService = defineService({
  name: 'agent-registry',
  version: '0.1.0',
  config: AgentRegistryConfig,
  build: async ({ store, publisher, config }) => {
    const revisions = await createRevisionRepository(store);
    return {
      handlers: { ...createRevisionHandlers({ revisions, publisher }) },
      internalHandlers: {
        [AGENT_RESOLVE]: createAgentResolveHandler({ revisions, defaultAgentId: config.DEFAULT_AGENT_ID }),
      },
    };
  },
});
