import { BUILTIN_TOOL_MANIFESTS } from '@ars/contracts';
import type { AgentConfigContent, AgentPermission, Tool, VerifiedIdentity } from '@ars/contracts';
import type { LiveAgent } from '../handlers/agent-state.ts';
import { buildCatalogue } from '../tools/catalogue.ts';
import type { ToolCatalogueDeps } from '../tools/tools.handler.ts';

/**
 * What an agent's runs may use, from its head configuration: its tools
 * (the catalogue's logic, tool exposure applied) and its permissions.
 */

type Exposure = AgentConfigContent['tool_exposure'];

/** Whether the agent's tool exposure lets its runs see `name` (as the run-executor's registry applies it). */
export function isExposed(exposure: Exposure, name: string): boolean {
  if (exposure === undefined || exposure.mode === 'all') return true;
  const listed = exposure.tools.includes(name);
  return exposure.mode === 'allow_list' ? listed : !listed;
}

/**
 * The tools the agent's runs see: the built-ins and its MCP servers' tools
 * (connecting them as a run would), under the tenant's approval policies,
 * with the agent's tool exposure applied. By name.
 */
export async function agentTools(deps: ToolCatalogueDeps, caller: VerifiedIdentity, agent: LiveAgent): Promise<Tool[]> {
  const [mcp, overrides] = await Promise.all([
    deps.host.listAgentMcpTools(caller, agent.agent_id),
    deps.policies.ofTenant(caller.tenant),
  ]);
  const catalogue = buildCatalogue({ agents: [mcp] }, overrides);
  return catalogue.tools.filter((tool) => isExposed(agent.config.tool_exposure, tool.name));
}

/**
 * The agent's permissions, from its configuration: each exposed built-in
 * tool (`tool:<name>`: call), each MCP server (`mcp:<server_id>`: the
 * exposure decides which of its tools, `call` of the exposed ones), each
 * OAuth provider's scopes (`oauth:<provider>`) and each OAuth-bound server's
 * scopes (`oauth:<provider>:<server_id>`), and its LLM provider
 * (`llm:<provider_name>`: complete).
 */
export function agentPermissions(config: AgentConfigContent): AgentPermission[] {
  const exposure = config.tool_exposure;
  const permissions: AgentPermission[] = [];
  for (const manifest of BUILTIN_TOOL_MANIFESTS) {
    if (isExposed(exposure, manifest.name)) permissions.push({ resource: `tool:${manifest.name}`, actions: ['call'] });
  }
  for (const connection of config.mcp_connections ?? []) {
    permissions.push({ resource: `mcp:${connection.server_id}`, actions: ['list_tools', 'call'] });
  }
  for (const provider of config.oauth_providers ?? []) {
    permissions.push({ resource: `oauth:${provider.provider_name}`, actions: [...(provider.scopes ?? [])] });
  }
  for (const capability of config.oauth_mcp_capabilities ?? []) {
    permissions.push({
      resource: `oauth:${capability.provider_name}:${capability.server_id}`,
      actions: [...capability.scopes],
    });
  }
  if (config.llm_provider !== undefined) {
    permissions.push({ resource: `llm:${config.llm_provider.provider_name}`, actions: ['complete'] });
  }
  return permissions;
}
