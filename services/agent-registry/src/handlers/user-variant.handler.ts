import {
  AgentConfigUserDiffRequest,
  AgentConfigUserGetRequest,
  AgentConfigUserListRevisionsRequest,
  AgentConfigUserRollbackRequest,
  AgentConfigUserSetRevisionRequest,
  ServiceError,
} from '@ars/contracts';
import type { EventPublisher, RpcHandler } from '@ars/bus';
import { requireOwnIdentity } from '@ars/service-kit';
import { requireVariantClaim } from '../domain/authority.ts';
import { checkVariantMembers } from '../domain/user-variant.ts';
import type { RevisionRepository } from '../store/revision.repository.ts';
import { liveAgent, refuseIfRetired } from './agent-state.ts';
import type { AgentLookup } from './agent-state.ts';
import { createRevisionTierHandlers } from './revision-tier.ts';

/** What the per-user variant tier needs. */
export interface UserVariantDeps extends AgentLookup {
  readonly variants: RevisionRepository;
  readonly publisher: EventPublisher;
}

/**
 * The per-user variant tier (`agent_config.user.get`, `set_revision`,
 * `list_revisions`, `diff`, `rollback`): revisions per (tenant, verified
 * user, agent id), layered over the agent's revision at resolution. Needs
 * the verified `agent_config:user` claim (admin does not satisfy it: 403
 * `scope_mismatch`); the body identity may only repeat the verified
 * one. A write needs an agent that resolves in the tenant (404 `not_found`
 * otherwise, 409 `conflict` when retired) and sets only the members of
 * `VARIANT_MEMBERS`. Writes publish `agent.config.revised` (and rollback
 * `agent.config.reverted`) with the variant's revision ids.
 */
export function createUserVariantHandlers(deps: UserVariantDeps): Record<string, RpcHandler> {
  const handlers = createRevisionTierHandlers({
    repository: deps.variants,
    publisher: deps.publisher,
    admit: (method, identity, body) => {
      requireVariantClaim(method, identity);
      requireOwnIdentity(method, identity, body.identity);
      return identity;
    },
    lineage: (caller, agentId) => ({ tenant: caller.tenant, user: caller.user, agent_id: agentId }),
    requests: {
      set_revision: AgentConfigUserSetRevisionRequest,
      get: AgentConfigUserGetRequest,
      list_revisions: AgentConfigUserListRevisionsRequest,
      diff: AgentConfigUserDiffRequest,
      rollback: AgentConfigUserRollbackRequest,
    },
    beforeWrite: async (caller, agentId, config) => {
      if (config !== undefined) checkVariantMembers(config);
      await refuseIfRetired(deps, caller.tenant, agentId, 'a per-user variant write');
      if ((await liveAgent(deps, caller.tenant, agentId)) === null) {
        throw new ServiceError('not_found', `agent ${agentId} has no configuration in this tenant`);
      }
    },
  });
  return {
    'agent_config.user.set_revision': handlers.set_revision,
    'agent_config.user.get': handlers.get,
    'agent_config.user.list_revisions': handlers.list_revisions,
    'agent_config.user.diff': handlers.diff,
    'agent_config.user.rollback': handlers.rollback,
  };
}
