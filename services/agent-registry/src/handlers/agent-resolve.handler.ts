import { AGENT_RESOLVE, refuse, SCOPES, ServiceError } from '@ars/contracts';
import type { AGENT_EFFECTIVE_CONFIG, VerifiedIdentity } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { liveAgent } from './agent-state.ts';
import type { AgentLookup } from './agent-state.ts';

/**
 * The one refusal for an agent id a tenant cannot start: unknown, another
 * tenant's or retired (`unknown_agent`, declared alike by both endpoints).
 */
export function unknownAgent(
  endpoint: typeof AGENT_RESOLVE | typeof AGENT_EFFECTIVE_CONFIG,
  agentId: string,
): ServiceError {
  return refuse(endpoint, 'unknown_agent', `agent_id ${agentId} names no agent configuration`);
}

/**
 * An internal endpoint answers only about the calling identity's tenant
 * (or any tenant for an `admin` caller, who may act for another): a body
 * tenant naming another is 403 `scope_mismatch`.
 */
export function requireCallerTenant(endpoint: string, caller: VerifiedIdentity, tenant: string): void {
  if (tenant !== caller.tenant && !caller.scopes.includes(SCOPES.admin)) {
    throw new ServiceError('scope_mismatch', `${endpoint}: the body tenant is not the calling identity's tenant`);
  }
}

/**
 * `_agent.resolve` `{tenant, agent_id}` → `{agent_id, revision_id, config}`:
 * the head revision of the agent in that tenant. The
 * configured default agent always resolves (to the built-in configuration
 * while it has no revision). Anything else without a revision in the tenant,
 * or retired, is `invalid_request` with one message whether the id is
 * unknown, another tenant's or retired, so the answer reveals nothing about
 * other tenants.
 */
export function createAgentResolveHandler(deps: AgentLookup): InternalHandler {
  return serveInternal(AGENT_RESOLVE, async ({ identity, body }) => {
    const { tenant, agent_id: agentId } = body;
    requireCallerTenant(AGENT_RESOLVE.name, identity, tenant);
    const agent = await liveAgent(deps, tenant, agentId);
    if (agent === null) throw unknownAgent(AGENT_RESOLVE, agentId);
    return { agent_id: agent.agent_id, revision_id: agent.revision_id, config: agent.config };
  });
}
