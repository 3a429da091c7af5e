import {
  AgentConfigDiffRequest,
  AgentConfigGetRequest,
  AgentConfigListRevisionsRequest,
  AgentConfigRollbackRequest,
  AgentConfigSetRevisionRequest,
  ServiceError,
} from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { EventPublisher, RpcHandler } from '@ars/bus';
import { requireAdmin, requireOwnIdentity } from '@ars/service-kit';
import type { RetirementRepository } from '../store/retirement.repository.ts';
import type { RevisionRepository } from '../store/revision.repository.ts';
import { isRetired, refuseIfRetired } from './agent-state.ts';
import { createRevisionTierHandlers } from './revision-tier.ts';
import type { RevisionTier } from './revision-tier.ts';

export { toRevisionView } from './revision-tier.ts';

/** What the admin revision handlers need. */
export interface RevisionHandlerDeps {
  readonly revisions: RevisionRepository;
  readonly retirements: RetirementRepository;
  readonly publisher: EventPublisher;
  readonly defaultAgentId: string;
}

/** Admin gate (403 `identity_scope_required` without `admin`) plus the body identity check. */
export function admitAdmin(method: string, identity: VerifiedIdentity, body: { identity?: unknown }) {
  requireAdmin(method, identity);
  requireOwnIdentity(method, identity, body.identity as Parameters<typeof requireOwnIdentity>[2]);
  return identity;
}

/**
 * The admin tier's revision methods (`agent_config.set_revision`, `get`,
 * `list_revisions`, `diff`, `rollback`) over the (tenant, agent id)
 * lineage. A retired agent takes no rollback (409 `conflict`);
 * `set_revision` on it writes the new head and reinstates it.
 */
export function createRevisionHandlers(deps: RevisionHandlerDeps): Record<string, RpcHandler> {
  const tier: RevisionTier = {
    repository: deps.revisions,
    publisher: deps.publisher,
    admit: admitAdmin,
    lineage: (caller, agentId) => ({ tenant: caller.tenant, agent_id: agentId }),
    beforeWrite: async (caller, agentId, config) => {
      // set_revision (with a config) reinstates a retired agent, not one still retiring.
      if (config === undefined) return refuseIfRetired(deps, caller.tenant, agentId, 'a rollback');
      const retirement = await deps.retirements.get(caller.tenant, agentId);
      if (retirement?.state === 'retiring') {
        throw new ServiceError('conflict', `agent ${agentId} is being retired; retry once the retirement completed`);
      }
    },
    requests: {
      set_revision: AgentConfigSetRevisionRequest,
      get: AgentConfigGetRequest,
      list_revisions: AgentConfigListRevisionsRequest,
      diff: AgentConfigDiffRequest,
      rollback: AgentConfigRollbackRequest,
    },
    afterSetRevision: async (caller, record) => {
      if (await isRetired(deps, caller.tenant, record.agent_id)) {
        await deps.retirements.reinstate(caller.tenant, record.agent_id);
      }
    },
  };
  const handlers = createRevisionTierHandlers(tier);
  return {
    'agent_config.set_revision': handlers.set_revision,
    'agent_config.get': handlers.get,
    'agent_config.list_revisions': handlers.list_revisions,
    'agent_config.diff': handlers.diff,
    'agent_config.rollback': handlers.rollback,
  };
}
