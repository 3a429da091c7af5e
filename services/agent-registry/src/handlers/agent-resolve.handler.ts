import { z } from 'zod';
import { AgentId, SCOPES, ServiceError } from '@ars/contracts';
import type { AgentConfigContent, VerifiedIdentity } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { liveAgent } from './agent-state.ts';
import type { AgentLookup } from './agent-state.ts';

/** Name of the internal endpoint (served on `ars.rpc.agent-registry._agent.resolve`). */
export const AGENT_RESOLVE = '_agent.resolve';

/** Request of `_agent.resolve`. */
export const AgentResolveRequest = z.strictObject({ tenant: z.string().min(1), agent_id: AgentId });
export type AgentResolveRequest = z.infer<typeof AgentResolveRequest>;

/** Answer of `_agent.resolve`; `revision_id` is null for the built-in default configuration. */
export interface AgentResolveResult {
  readonly agent_id: string;
  readonly revision_id: string | null;
  readonly config: AgentConfigContent;
}

/** The one refusal for an agent id a tenant cannot start: unknown, another tenant's or retired. */
export function unknownAgent(agentId: string): ServiceError {
  return new ServiceError('invalid_request', `agent_id ${agentId} names no agent configuration`);
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
export function createAgentResolveHandler(deps: AgentLookup): RpcHandler {
  return async ({ identity, body }): Promise<AgentResolveResult> => {
    const parsed = AgentResolveRequest.safeParse(body);
    if (!parsed.success) throw new ServiceError('invalid_request', `invalid ${AGENT_RESOLVE} request`);
    const { tenant, agent_id: agentId } = parsed.data;
    requireCallerTenant(AGENT_RESOLVE, identity, tenant);
    const agent = await liveAgent(deps, tenant, agentId);
    if (agent === null) throw unknownAgent(agentId);
    return { agent_id: agent.agent_id, revision_id: agent.revision_id, config: agent.config };
  };
}
