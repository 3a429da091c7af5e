import { ServiceError } from '@ars/contracts';
import type { AgentConfigContent } from '@ars/contracts';
import { contentHash } from '@ars/service-kit';
import { BUILTIN_DEFAULT_CONFIG } from '../domain/default-agent.ts';
import type { RetirementRepository } from '../store/retirement.repository.ts';
import type { RevisionRepository } from '../store/revision.repository.ts';

/** What decides whether an agent id names a usable configuration in a tenant. */
export interface AgentLookup {
  readonly revisions: RevisionRepository;
  readonly retirements: RetirementRepository;
  readonly defaultAgentId: string;
}

/** An agent's configuration as new runs get it. */
export interface LiveAgent {
  readonly agent_id: string;
  /** Null for the built-in default configuration. */
  readonly revision_id: string | null;
  readonly content_hash: string;
  readonly config: AgentConfigContent;
}

const BUILTIN_HASH = contentHash(BUILTIN_DEFAULT_CONFIG);

/** True while a retirement of the agent is under way or done. */
export async function isRetired(lookup: AgentLookup, tenant: string, agentId: string): Promise<boolean> {
  const retirement = await lookup.retirements.get(tenant, agentId);
  return retirement !== null && retirement.state !== 'reinstated';
}

/**
 * The configuration a new run of `agentId` in `tenant` gets: the head
 * revision unless the agent is retired; the built-in configuration for the
 * default agent without a revision; otherwise null (unknown, another
 * tenant's, or retired: the caller cannot tell which).
 */
export async function liveAgent(lookup: AgentLookup, tenant: string, agentId: string): Promise<LiveAgent | null> {
  const [head, retired] = await Promise.all([
    lookup.revisions.head({ tenant, agent_id: agentId }),
    isRetired(lookup, tenant, agentId),
  ]);
  if (retired) return null;
  if (head !== null) {
    return { agent_id: agentId, revision_id: head.revision_id, content_hash: head.content_hash, config: head.config };
  }
  if (agentId === lookup.defaultAgentId) {
    return { agent_id: agentId, revision_id: null, content_hash: BUILTIN_HASH, config: BUILTIN_DEFAULT_CONFIG };
  }
  return null;
}

/** 409 `conflict` when the agent is retired (or retiring): `what` names the refused write. */
export async function refuseIfRetired(lookup: AgentLookup, tenant: string, agentId: string, what: string) {
  if (await isRetired(lookup, tenant, agentId)) {
    throw new ServiceError(
      'conflict',
      `agent ${agentId} is retired; ${what} is refused (agent_config.set_revision reinstates it)`,
    );
  }
}

/** The configuration an admin setter starts from when the agent has no revision yet. */
export function initialConfig(lookup: AgentLookup, agentId: string): AgentConfigContent {
  return agentId === lookup.defaultAgentId ? BUILTIN_DEFAULT_CONFIG : {};
}
