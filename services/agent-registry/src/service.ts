import { createConfigChangeAnnouncer } from '@ars/bus';
import { createErasedSessionMarkers, defineService } from '@ars/service-kit';
import { observeWrites } from '@ars/store';
import { AgentRegistryConfig } from './config.ts';
import { createRetireHandler } from './handlers/agent-config-retire.handler.ts';
import { createRevisionHandlers } from './handlers/agent-config-revisions.handler.ts';
import { createSetterHandlers } from './handlers/agent-config-setters.handler.ts';
import { createAgentResolveHandler } from './handlers/agent-resolve.handler.ts';
import { createEffectiveConfigHandler } from './handlers/effective-config.handler.ts';
import { createEraseSessionHandler } from './handlers/erase-session.handler.ts';
import { createSessionSettingsHandlers } from './handlers/session-settings.handler.ts';
import { createSkillHandlers } from './handlers/skills.handler.ts';
import { createTenantOverridesSource } from './handlers/tenant-overrides.ts';
import { createUserVariantHandlers } from './handlers/user-variant.handler.ts';
import { createMcpHost } from './mcp/index.ts';
import { createOAuthModule } from './oauth/index.ts';
import { CONFIG_INPUT_COLLECTIONS } from './store/config-inputs.ts';
import { createRetirementRepository } from './store/retirement.repository.ts';
import { createRevisionRepository, USER_REVISIONS_COLLECTION } from './store/revision.repository.ts';
import { createSessionSettingsRepository } from './store/session-settings.repository.ts';
import { createSkillRepository } from './store/skill.repository.ts';
import { createToolsModule } from './tools/index.ts';
import { createCallMetricsRepository } from './tools/call-metrics.repository.ts';
import { createFleetModule, withFleetRegistration } from './fleet/index.ts';
import type { FleetModule } from './fleet/index.ts';

/**
 * The agent-registry service: agent_config.* (revisions, tiers, skills), agents.* (fleet registry and control), tools.* and mcp.*.
 * Built so far: every `agent_config.*` method (admin tier, session-user tier, per-user variant tier) and the internal
 * `_agent.resolve` and `_agent.effective_config`; the MCP host (`mcp.servers.*`, `mcp.apps.*`, `_mcp.call_tool`, `_mcp.cancel_call`,
 * see `mcp/`); the tool catalogue (`tools.*`, `_tools.catalogue`, `_tools.record_calls`, see `tools/`); OAuth-bound
 * MCP servers (`_oauth.begin`, `_oauth.complete`, `mcp.servers.bindings.list`, `refresh_binding`, `revoke_binding`,
 * `tools.revoke_oauth`, see `oauth/`); the agent fleet (`agents.*`: registrations in the `ars_fleet` KV bucket,
 * fleet control, health reports, see `fleet/`).
 */
export const agentRegistryService = defineService({
  name: 'agent-registry',
  version: '0.1.0',
  config: AgentRegistryConfig,
  build: async ({ store: ownStore, publisher, config, rpc, logger, bus }) => {
    // Executors keep resolved configurations: every write to what they are resolved from is announced.
    const changes = createConfigChangeAnnouncer(bus, 'agent-registry');
    const store = observeWrites(ownStore, CONFIG_INPUT_COLLECTIONS, () => changes.announce());
    const fleetRef: { module?: FleetModule } = {};
    const [adminRevisions, variants, skills, sessionSettings] = await Promise.all([
      createRevisionRepository(store),
      createRevisionRepository(store, { collection: USER_REVISIONS_COLLECTION, perUser: true }),
      createSkillRepository(store),
      createSessionSettingsRepository(store),
    ]);
    // Every new head revision of the admin tier registers its agent in the fleet (or takes its version hash).
    const revisions = withFleetRegistration(adminRevisions, () => fleetRef.module?.registrar, logger);
    const retirements = createRetirementRepository(store);
    const erased = createErasedSessionMarkers(store);
    const lookup = { revisions, retirements, defaultAgentId: config.DEFAULT_AGENT_ID };
    const tenantOverrides = createTenantOverridesSource(rpc, logger);
    const metrics = await createCallMetricsRepository(store);
    const oauth = await createOAuthModule({
      store,
      rpc,
      bus,
      publisher,
      logger,
      config,
      lookup: { ...lookup, variants, sessionSettings },
    });
    const mcp = await createMcpHost({
      ...lookup,
      variants,
      sessionSettings,
      config,
      bus,
      publisher,
      logger,
      store,
      rpc,
      recordCall: (tenant, call) => metrics.record(tenant, [call]),
      oauth: oauth.gate,
    });
    const tools = await createToolsModule({
      store,
      host: mcp.toolHost,
      metrics,
      retentionDays: config.TOOL_METRICS_RETENTION_DAYS,
      logger,
    });
    const fleet = await createFleetModule({
      store,
      bus,
      rpc,
      publisher,
      logger,
      lookup: { revisions: adminRevisions, retirements, defaultAgentId: config.DEFAULT_AGENT_ID },
      skills,
      catalogue: { host: mcp.toolHost, policies: tools.policies },
      healthIntervalMs: config.FLEET_HEALTH_INTERVAL_MS,
      dependencyTimeoutMs: config.FLEET_DEPENDENCY_TIMEOUT_MS,
    });
    fleetRef.module = fleet;
    return {
      handlers: {
        ...fleet.handlers,
        ...createRevisionHandlers({ ...lookup, publisher }),
        ...createSetterHandlers({ ...lookup, publisher }),
        'agent_config.retire': createRetireHandler({ ...lookup, variants, sessionSettings, skills, publisher }),
        ...createSkillHandlers({ ...lookup, skills, publisher, erased }),
        ...createSessionSettingsHandlers({ ...lookup, sessionSettings, erased }),
        ...createUserVariantHandlers({ ...lookup, variants, publisher }),
        ...mcp.handlers,
        ...tools.handlers,
        ...oauth.handlers,
      },
      internalHandlers: [
        createAgentResolveHandler(lookup),
        createEffectiveConfigHandler({
          ...lookup,
          variants,
          sessionSettings,
          skills,
          tenantOverrides,
          approvalPolicies: tools.policies,
          publisher,
          logger,
        }),
        createEraseSessionHandler({ skills, sessionSettings, erased }),
        ...mcp.internalHandlers,
        ...tools.internalHandlers,
        ...oauth.internalHandlers,
      ],
      stop: async () => {
        changes.stop();
        await fleet.stop();
        await tools.stop();
        await mcp.stop();
      },
    };
  },
});
