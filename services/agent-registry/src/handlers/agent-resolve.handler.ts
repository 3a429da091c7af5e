import { z } from 'zod';
import { AgentId, ServiceError } from '@ars/contracts';
import type { AgentConfigContent } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { BUILTIN_DEFAULT_CONFIG } from '../domain/default-agent.ts';
import type { RevisionRepository } from '../store/revision.repository.ts';

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

/**
 * `_agent.resolve` `{tenant, agent_id}` → `{agent_id, revision_id, config}`:
 * the head revision of the agent in that tenant. The configured default agent
 * always resolves (to the built-in configuration while it has no revision).
 * Anything else without a revision in the tenant is `invalid_request` with
 * one message whether the id is unknown or another tenant's, so the answer
 * reveals nothing about other tenants.
 */
export function createAgentResolveHandler(deps: {
  readonly revisions: RevisionRepository;
  readonly defaultAgentId: string;
}): RpcHandler {
  return async ({ body }): Promise<AgentResolveResult> => {
    const parsed = AgentResolveRequest.safeParse(body);
    if (!parsed.success) throw new ServiceError('invalid_request', `invalid ${AGENT_RESOLVE} request`);
    const { tenant, agent_id: agentId } = parsed.data;
    const head = await deps.revisions.head(tenant, agentId);
    if (head !== null) return { agent_id: agentId, revision_id: head.revision_id, config: head.config };
    if (agentId === deps.defaultAgentId) {
      return { agent_id: agentId, revision_id: null, config: BUILTIN_DEFAULT_CONFIG };
    }
    throw new ServiceError('invalid_request', `agent_id ${agentId} names no agent configuration`);
  };
}
