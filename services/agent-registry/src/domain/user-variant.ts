import { ServiceError } from '@ars/contracts';
import type { AgentConfigContent } from '@ars/contracts';

/**
 * What a per-user variant may set. A variant is written by a user holding
 * `agent_config:user`, not by an admin, so it keeps to what shapes the
 * conversation: prompt text, LLM parameters, skills membership, tool
 * exposure (which can only hide tools: it is intersected with the agent's),
 * multimodal and naming preferences. Members that reach outside or run
 * something (LLM provider, MCP connections and discovery, OAuth, the
 * completion hook) stay the admin's: a provider address chosen by a user
 * would receive the tenant's provider key.
 */
export const VARIANT_MEMBERS = [
  'prompt_layers',
  'extra_system_blocks',
  'llm_params',
  'tool_exposure',
  'skills',
  'multimodal',
  'naming_policy',
] as const satisfies readonly (keyof AgentConfigContent)[];

/** Throws 400 `invalid_request` naming the first member a variant may not set. */
export function checkVariantMembers(config: AgentConfigContent): void {
  const allowed: readonly string[] = VARIANT_MEMBERS;
  const refused = Object.keys(config).find((key) => !allowed.includes(key));
  if (refused !== undefined) {
    throw new ServiceError(
      'invalid_request',
      `config.${refused}: a per-user variant may set only ${VARIANT_MEMBERS.join(', ')}`,
    );
  }
}
