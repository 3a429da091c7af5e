import { defineService } from '@ars/service-kit';
import { AgentRegistryConfig } from './config.ts';
import { createRetireHandler } from './handlers/agent-config-retire.handler.ts';
import { createRevisionHandlers } from './handlers/agent-config-revisions.handler.ts';
import { createSetterHandlers } from './handlers/agent-config-setters.handler.ts';
import { createAgentResolveHandler } from './handlers/agent-resolve.handler.ts';
import { createEffectiveConfigHandler } from './handlers/effective-config.handler.ts';
import { createSessionSettingsHandlers } from './handlers/session-settings.handler.ts';
import { createSkillHandlers } from './handlers/skills.handler.ts';
import { createTenantOverridesSource } from './handlers/tenant-overrides.ts';
import { createUserVariantHandlers } from './handlers/user-variant.handler.ts';
import { createRetirementRepository } from './store/retirement.repository.ts';
import { createRevisionRepository } from './store/revision.repository.ts';
import { createSessionSettingsRepository } from './store/session-settings.repository.ts';
import { createSkillRepository } from './store/skill.repository.ts';

/**
 * The agent-registry service: agent_config.* (revisions, tiers, skills), agents.* (fleet registry and control), tools.* and mcp.*.
 * Built so far: every `agent_config.*` method (admin tier, session-user tier, per-user variant tier) and the internal
 * `_agent.resolve` and `_agent.effective_config`; the agents.*, tools.* and mcp.* methods answer `unimplemented`.
 */
export const agentRegistryService = defineService({
  name: 'agent-registry',
  version: '0.1.0',
  config: AgentRegistryConfig,
  build: async ({ store, publisher, config, rpc, logger }) => {
    const [revisions, variants, skills, sessionSettings] = await Promise.all([
      createRevisionRepository(store),
      createRevisionRepository(store, { collection: 'agent_config_user_revisions', perUser: true }),
      createSkillRepository(store),
      createSessionSettingsRepository(store),
    ]);
    const retirements = createRetirementRepository(store);
    const lookup = { revisions, retirements, defaultAgentId: config.DEFAULT_AGENT_ID };
    const tenantOverrides = createTenantOverridesSource(rpc, logger);
    return {
      handlers: {
        ...createRevisionHandlers({ ...lookup, publisher }),
        ...createSetterHandlers({ ...lookup, publisher }),
        'agent_config.retire': createRetireHandler({ ...lookup, variants, sessionSettings, skills, publisher }),
        ...createSkillHandlers({ ...lookup, skills, publisher }),
        ...createSessionSettingsHandlers({ ...lookup, sessionSettings }),
        ...createUserVariantHandlers({ ...lookup, variants, publisher }),
      },
      internalHandlers: [
        createAgentResolveHandler(lookup),
        createEffectiveConfigHandler({ ...lookup, variants, sessionSettings, skills, tenantOverrides }),
      ],
    };
  },
});
