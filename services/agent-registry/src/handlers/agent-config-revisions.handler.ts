import { ServiceError } from '@ars/contracts';
import type {
  AgentConfigGetRequest,
  AgentConfigListRevisionsRequest,
  AgentConfigRevision,
  AgentConfigRevisionSummary,
  AgentConfigSetRevisionRequest,
  VerifiedIdentity,
} from '@ars/contracts';
import type { EventPublisher, RpcHandler } from '@ars/bus';
import { isInvalidCursorError } from '@ars/store';
import type { z } from 'zod';
import { checkBodyIdentity, requireAdmin } from '../domain/authority.ts';
import { contentHash } from '../domain/canonical-json.ts';
import type { RevisionRecord, RevisionRepository } from '../store/revision.repository.ts';

type SetRevisionBody = z.infer<typeof AgentConfigSetRevisionRequest>;
type GetBody = z.infer<typeof AgentConfigGetRequest>;
type ListBody = z.infer<typeof AgentConfigListRevisionsRequest>;

/** What the revision handlers need. */
export interface RevisionHandlerDeps {
  readonly revisions: RevisionRepository;
  readonly publisher: EventPublisher;
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

/** Admin gate plus body identity check; returns the caller. */
function admit(method: string, identity: VerifiedIdentity, body: { identity?: SetRevisionBody['identity'] }) {
  requireAdmin(method, identity);
  checkBodyIdentity(method, identity, body.identity);
  return identity;
}

/**
 * `agent_config.set_revision` (admin): writes `config` as the agent's new
 * head revision in the caller's tenant and publishes `agent.config.revised`
 * after the store write (so a reader never sees the event before the
 * revision). A stale `parent_revision_id` is 409 `conflict`.
 */
function setRevision(deps: RevisionHandlerDeps): RpcHandler {
  return async ({ method, identity, body }) => {
    const request = body as SetRevisionBody;
    const caller = admit(method, identity, request);
    const author = { tenant: caller.tenant, user: caller.user, session: caller.session, run: '' };
    const outcome = await deps.revisions.append({
      tenant: caller.tenant,
      agent_id: request.agent_id,
      content_hash: contentHash(request.config),
      author,
      message: request.message,
      config: request.config,
      expected_parent: request.parent_revision_id,
    });
    if ('kind' in outcome && outcome.kind === 'contended') {
      throw new ServiceError('conflict', `agent ${request.agent_id} is being revised concurrently; retry`);
    }
    if ('kind' in outcome) {
      throw new ServiceError(
        'conflict',
        `parent_revision_id ${request.parent_revision_id ?? ''} is not the head of agent ${request.agent_id}` +
          (outcome.head === undefined ? ' (it has no revision yet)' : ` (the head is ${outcome.head})`),
      );
    }
    await deps.publisher.publish({
      type: 'agent.config.revised',
      identity: { tenant: caller.tenant, user: caller.user, session: caller.session },
      eventId: `agent.config.revised:${outcome.revision_id}`,
      occurredAt: outcome.created_at,
      payload: {
        Author: author,
        AgentID: outcome.agent_id,
        RevisionID: outcome.revision_id,
        ParentRevisionID: outcome.parent_revision_id ?? '',
        ContentHash: outcome.content_hash,
        OccurredAt: outcome.created_at,
      },
    });
    return { revision: toRevisionView(outcome) };
  };
}

/**
 * `agent_config.get` (admin): the head revision, or the one named by
 * `revision_id`. An agent or revision of another tenant is `not_found`,
 * exactly as one that never existed.
 */
function getRevision(deps: RevisionHandlerDeps): RpcHandler {
  return async ({ method, identity, body }) => {
    const request = body as GetBody;
    const caller = admit(method, identity, request);
    const found =
      request.revision_id === undefined
        ? await deps.revisions.head(caller.tenant, request.agent_id)
        : await deps.revisions.get(caller.tenant, request.agent_id, request.revision_id);
    if (found === null) {
      const what = request.revision_id === undefined ? 'has no revision' : `has no revision ${request.revision_id}`;
      throw new ServiceError('not_found', `agent ${request.agent_id} ${what}`);
    }
    return { revision: toRevisionView(found) };
  };
}

/**
 * `agent_config.list_revisions` (admin): the agent's revisions in the
 * caller's tenant, newest first, `limit` per page; `head` marks the current
 * one. An unknown agent (or another tenant's) lists nothing.
 */
function listRevisions(deps: RevisionHandlerDeps): RpcHandler {
  return async ({ method, identity, body }) => {
    const request = body as ListBody;
    const caller = admit(method, identity, request);
    try {
      const [page, head] = await Promise.all([
        deps.revisions.list(caller.tenant, request.agent_id, { limit: request.limit, after: request.cursor }),
        deps.revisions.head(caller.tenant, request.agent_id),
      ]);
      return {
        items: page.items.map((record) => toSummary(record, head?.number)),
        ...(page.next_cursor === null ? {} : { next_cursor: page.next_cursor }),
      };
    } catch (error) {
      if (isInvalidCursorError(error)) throw new ServiceError('invalid_request', 'cursor: not a cursor of this list');
      throw error;
    }
  };
}

/** The admin-tier revision methods, by registry name. */
export function createRevisionHandlers(deps: RevisionHandlerDeps): Record<string, RpcHandler> {
  return {
    'agent_config.set_revision': setRevision(deps),
    'agent_config.get': getRevision(deps),
    'agent_config.list_revisions': listRevisions(deps),
  };
}
