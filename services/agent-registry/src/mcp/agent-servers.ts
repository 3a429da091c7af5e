import type { McpConnection, OAuthMcpCapability, OAuthProviderConfig } from '@ars/contracts';
import { resolveEffectiveConfig } from '../domain/effective-config.ts';
import { liveAgent } from '../handlers/agent-state.ts';
import type { AgentLookup } from '../handlers/agent-state.ts';
import type { RevisionRepository } from '../store/revision.repository.ts';
import type { SessionSettingsRepository } from '../store/session-settings.repository.ts';

/**
 * Which MCP servers an agent has. For a run: the agent's connections as
 * `_agent.effective_config` resolves them for the run's identity (head
 * revision, then the user's variant, then the session's source disables),
 * through the same layer function; the tenant overrides and skills layers
 * touch no connection and are not read. For the public `mcp.servers.*`:
 * the head revisions of the tenant's live agents.
 */

/** What the resolution reads. */
export interface AgentServerDeps extends AgentLookup {
  readonly variants: RevisionRepository;
  readonly sessionSettings: SessionSettingsRepository;
}

/** An agent's MCP connections and the revision they come from. */
export interface AgentServers {
  readonly agent_id: string;
  /** The revision (the user's variant revision when it applied); null for the built-in default. */
  readonly revision_id: string | null;
  readonly connections: readonly McpConnection[];
  /** The agent's OAuth providers (a connection's `oauth_provider` names one). */
  readonly oauth_providers?: readonly OAuthProviderConfig[];
  /** The scopes the agent's servers need, per server and provider. */
  readonly oauth_capabilities?: readonly OAuthMcpCapability[];
}

/** Agents read per tenant at most by the public listing. */
export const MAX_AGENTS_PER_TENANT = 1_000;

/** The connections of a run of `agentId` by `run`'s identity; null when the tenant cannot start that agent. */
export async function runServers(
  deps: AgentServerDeps,
  run: { readonly tenant: string; readonly user: string; readonly session: string },
  agentId: string,
): Promise<AgentServers | null> {
  const { tenant, user, session } = run;
  const [agent, variant, settings] = await Promise.all([
    liveAgent(deps, tenant, agentId),
    deps.variants.head({ tenant, user, agent_id: agentId }),
    deps.sessionSettings.merged({ tenant, user, session, agent_id: agentId }),
  ]);
  if (agent === null) return null;
  const effective = resolveEffectiveConfig({
    agentId,
    agent: { revision_id: agent.revision_id, config: agent.config },
    tenant: {}, // tenant LLM overrides touch no connection
    variant: variant === null ? null : { revision_id: variant.revision_id, config: variant.config },
    session: settings,
    skills: [],
  });
  return {
    agent_id: agentId,
    revision_id: effective.variant_revision_id ?? effective.revision_id,
    connections: effective.config.mcp_connections ?? [],
    oauth_providers: effective.config.oauth_providers ?? [],
    oauth_capabilities: effective.config.oauth_mcp_capabilities ?? [],
  };
}

/** The head-revision connections of every live agent of `tenant` (the default agent included), by agent id. */
export async function tenantServers(deps: AgentLookup, tenant: string): Promise<AgentServers[]> {
  const ids = await deps.revisions.agentIds(tenant, MAX_AGENTS_PER_TENANT);
  if (!ids.includes(deps.defaultAgentId)) ids.push(deps.defaultAgentId);
  ids.sort();
  const agents = await Promise.all(ids.map((id) => liveAgent(deps, tenant, id)));
  const servers: AgentServers[] = [];
  for (const agent of agents) {
    const connections = agent?.config.mcp_connections ?? [];
    if (agent === null || connections.length === 0) continue;
    servers.push({
      agent_id: agent.agent_id,
      revision_id: agent.revision_id,
      connections,
      oauth_providers: agent.config.oauth_providers ?? [],
      oauth_capabilities: agent.config.oauth_mcp_capabilities ?? [],
    });
  }
  return servers;
}
