import { ServiceError } from '@ars/contracts';
import type {
  AgentConfigContent,
  AgentConfigDiffRequest,
  AgentConfigDiffResponse,
  AgentConfigGetRequest,
  AgentConfigListRevisionsRequest,
  AgentConfigRevision,
  AgentConfigRevisionSummary,
  AgentConfigRollbackRequest,
  AgentConfigSetRevisionRequest,
  IdentityScope,
  VerifiedIdentity,
} from '@ars/contracts';
import type { EventPublisher, RpcHandler } from '@ars/bus';
import { typedMethod } from '@ars/service-kit';
import { isInvalidCursorError } from '@ars/store';
import { diffConfigs } from '../domain/config-diff.ts';
import type { Lineage, RevisionRecord, RevisionRepository } from '../store/revision.repository.ts';
import { authorOf, eventIdentityOf, writeDerived, writeWhole } from './revision-writer.ts';

/**
 * The revision methods shared by the admin tier (lineage: tenant and agent)
 * and the per-user variant tier (lineage: tenant, user and agent): get,
 * list_revisions, diff, rollback and set_revision. A tier says how callers
 * are admitted, which lineage a call means, and what a write must check.
 */
export interface RevisionTier {
  readonly repository: RevisionRepository;
  readonly publisher: EventPublisher;
  /** The gate: throws for a caller the tier refuses; answers the caller. */
  readonly admit: (method: string, identity: VerifiedIdentity, body: { identity?: IdentityScope }) => VerifiedIdentity;
  readonly lineage: (caller: VerifiedIdentity, agentId: string) => Lineage;
  /** Checks before a write (`config`: what set_revision writes; absent for rollback). */
  readonly beforeWrite: (caller: VerifiedIdentity, agentId: string, config?: AgentConfigContent) => Promise<void>;
  /** After a set_revision (the admin tier reinstates a retired agent here). */
  readonly afterSetRevision?: (caller: VerifiedIdentity, record: RevisionRecord) => Promise<void>;
  /** The tier's request schemas from the registry (every tier's are made by the same factories). */
  readonly requests: RevisionTierRequests;
}

/** The request schema of each revision method of a tier, by the method suffix. */
export interface RevisionTierRequests {
  readonly set_revision: typeof AgentConfigSetRevisionRequest;
  readonly get: typeof AgentConfigGetRequest;
  readonly list_revisions: typeof AgentConfigListRevisionsRequest;
  readonly diff: typeof AgentConfigDiffRequest;
  readonly rollback: typeof AgentConfigRollbackRequest;
}

/** A stored revision as the wire shows it. */
export function toRevisionView(record: RevisionRecord): AgentConfigRevision {
  const { _id: _omitId, number: _omitNumber, ...view } = record;
  return view;
}

function toSummary(record: RevisionRecord, headNumber: number | undefined): AgentConfigRevisionSummary {
  return {
    agent_id: record.agent_id,
    revision_id: record.revision_id,
    ...(record.parent_revision_id === undefined ? {} : { parent_revision_id: record.parent_revision_id }),
    content_hash: record.content_hash,
    author: record.author,
    ...(record.message === undefined ? {} : { message: record.message }),
    created_at: record.created_at,
    head: record.number === headNumber,
  };
}

async function mustGet(tier: RevisionTier, lineage: Lineage, revisionId: string | undefined): Promise<RevisionRecord> {
  const found =
    revisionId === undefined ? await tier.repository.head(lineage) : await tier.repository.get(lineage, revisionId);
  if (found === null) {
    const what = revisionId === undefined ? 'has no revision' : `has no revision ${revisionId}`;
    throw new ServiceError('not_found', `agent ${lineage.agent_id} ${what}`);
  }
  return found;
}

/**
 * set_revision: writes `config` as the new head and publishes
 * `agent.config.revised` after the store write (a reader never sees the
 * event before the revision). A stale `parent_revision_id` is 409 `conflict`.
 */
function setRevision(tier: RevisionTier): RpcHandler {
  return typedMethod(tier.requests.set_revision, async ({ method, identity, body: request }) => {
    const caller = tier.admit(method, identity, request);
    await tier.beforeWrite(caller, request.agent_id, request.config);
    const record = await writeWhole(tier.repository, tier.publisher, {
      lineage: tier.lineage(caller, request.agent_id),
      caller,
      parentRevisionId: request.parent_revision_id,
      message: request.message,
      config: request.config,
    });
    await tier.afterSetRevision?.(caller, record);
    return { revision: toRevisionView(record) };
  });
}

/** get: the head, or the revision named; another tenant's (or user's) is `not_found` as a missing one. */
function getRevision(tier: RevisionTier): RpcHandler {
  return typedMethod(tier.requests.get, async ({ method, identity, body: request }) => {
    const caller = tier.admit(method, identity, request);
    return {
      revision: toRevisionView(await mustGet(tier, tier.lineage(caller, request.agent_id), request.revision_id)),
    };
  });
}

/** list_revisions: newest first, `limit` per page, `head` marking the current one; an unknown lineage lists nothing. */
function listRevisions(tier: RevisionTier): RpcHandler {
  return typedMethod(tier.requests.list_revisions, async ({ method, identity, body: request }) => {
    const caller = tier.admit(method, identity, request);
    const lineage = tier.lineage(caller, request.agent_id);
    try {
      const [page, head] = await Promise.all([
        tier.repository.list(lineage, { limit: request.limit, after: request.cursor }),
        tier.repository.head(lineage),
      ]);
      return {
        items: page.items.map((record) => toSummary(record, head?.number)),
        ...(page.next_cursor === null ? {} : { next_cursor: page.next_cursor }),
      };
    } catch (error) {
      if (isInvalidCursorError(error)) throw new ServiceError('invalid_request', 'cursor: not a cursor of this list');
      throw error;
    }
  });
}

/** diff: the structural diff from `from_revision_id` to `to_revision_id` (default the head). */
function diffRevisions(tier: RevisionTier): RpcHandler {
  return typedMethod(
    tier.requests.diff,
    async ({ method, identity, body: request }): Promise<AgentConfigDiffResponse> => {
      const caller = tier.admit(method, identity, request);
      const lineage = tier.lineage(caller, request.agent_id);
      const [from, to] = await Promise.all([
        mustGet(tier, lineage, request.from_revision_id),
        mustGet(tier, lineage, request.to_revision_id),
      ]);
      return {
        agent_id: request.agent_id,
        from_revision_id: from.revision_id,
        to_revision_id: to.revision_id,
        changes: diffConfigs(from.config, to.config),
      };
    },
  );
}

/**
 * rollback: a new head revision whose configuration equals the revision
 * named by `to_revision_id`; publishes `agent.config.revised`, then
 * `agent.config.reverted` with `RevisionID` the new head and
 * `FromRevisionID` the earlier revision its content was restored from.
 */
function rollback(tier: RevisionTier): RpcHandler {
  return typedMethod(tier.requests.rollback, async ({ method, identity, body: request }) => {
    const caller = tier.admit(method, identity, request);
    const lineage = tier.lineage(caller, request.agent_id);
    const target = await mustGet(tier, lineage, request.to_revision_id);
    await tier.beforeWrite(caller, request.agent_id);
    const { record } = await writeDerived(tier.repository, tier.publisher, {
      lineage,
      caller,
      parentRevisionId: request.parent_revision_id,
      message: request.message ?? `rollback to ${target.revision_id}`,
      initial: target.config,
      derive: () => target.config,
    });
    await tier.publisher.publish({
      type: 'agent.config.reverted',
      identity: eventIdentityOf(caller),
      eventId: `agent.config.reverted:${record.revision_id}`,
      occurredAt: record.created_at,
      payload: {
        Author: authorOf(caller),
        AgentID: record.agent_id,
        RevisionID: record.revision_id,
        FromRevisionID: target.revision_id,
        OccurredAt: record.created_at,
      },
    });
    return { revision: toRevisionView(record) };
  });
}

/** The five revision handlers of a tier, by the method suffix (`get`, `set_revision`, …). */
export function createRevisionTierHandlers(tier: RevisionTier) {
  return {
    set_revision: setRevision(tier),
    get: getRevision(tier),
    list_revisions: listRevisions(tier),
    diff: diffRevisions(tier),
    rollback: rollback(tier),
  } as const;
}
