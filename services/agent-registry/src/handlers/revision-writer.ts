import { AgentConfigContent, ServiceError } from '@ars/contracts';
import type { IdentityQuad, VerifiedIdentity } from '@ars/contracts';
import type { EventPublisher } from '@ars/bus';
import { contentHash, describeFirstIssue } from '@ars/service-kit';
import { checkConfig } from '../domain/config-checks.ts';
import type { Lineage, RevisionRecord, RevisionRepository } from '../store/revision.repository.ts';

/** The verified caller as an event's `Author` quad (no run). */
export function authorOf(caller: VerifiedIdentity): IdentityQuad {
  return { tenant: caller.tenant, user: caller.user, session: caller.session, run: '' };
}

/** The event identity of the caller (events of configuration writes carry no run). */
export function eventIdentityOf(caller: VerifiedIdentity) {
  return { tenant: caller.tenant, user: caller.user, session: caller.session };
}

/**
 * Validates a configuration about to become a revision: the schema (a setter
 * may push a list past its bound) and {@link checkConfig}. Answers the parsed
 * configuration (schema defaults applied).
 */
export function validatedConfig(config: unknown): AgentConfigContent {
  const parsed = AgentConfigContent.safeParse(config);
  if (!parsed.success) throw new ServiceError('invalid_request', `config: ${describeFirstIssue(parsed.error)}`);
  checkConfig(parsed.data);
  return parsed.data;
}

/** Publishes `agent.config.revised` for a written revision (after the store write). */
export async function publishRevised(publisher: EventPublisher, caller: VerifiedIdentity, record: RevisionRecord) {
  await publisher.publish({
    type: 'agent.config.revised',
    identity: eventIdentityOf(caller),
    eventId: `agent.config.revised:${record.revision_id}`,
    occurredAt: record.created_at,
    payload: {
      Author: record.author,
      AgentID: record.agent_id,
      RevisionID: record.revision_id,
      ParentRevisionID: record.parent_revision_id ?? '',
      ContentHash: record.content_hash,
      OccurredAt: record.created_at,
    },
  });
}

function staleConflict(lineage: Lineage, named: string | undefined, head: string | undefined): ServiceError {
  return new ServiceError(
    'conflict',
    `parent_revision_id ${named ?? ''} is not the head of agent ${lineage.agent_id}` +
      (head === undefined ? ' (it has no revision yet)' : ` (the head is ${head})`),
  );
}

/** A revision write derived from the lineage's head. */
export interface DerivedWrite {
  readonly lineage: Lineage;
  readonly caller: VerifiedIdentity;
  /** The head the caller expects; absent: whatever it is (the derivation re-runs on a lost race). */
  readonly parentRevisionId?: string | undefined;
  readonly message?: string | undefined;
  /** The configuration a lineage without revisions starts from. */
  readonly initial: AgentConfigContent;
  /** The next configuration from the head's (may throw a ServiceError). */
  readonly derive: (config: AgentConfigContent, head: RevisionRecord | null) => AgentConfigContent;
}

/** Lost races a derived write retries before answering `conflict`. */
const MAX_DERIVE_ATTEMPTS = 8;

/**
 * Writes a new head revision derived from the current head: reads the head,
 * derives and validates the next configuration, and appends it expecting
 * that head. A named `parentRevisionId` that is not the head is 409
 * `conflict`; without one, a concurrent write makes it derive again from the
 * new head, so no edit is lost. Publishes `agent.config.revised`.
 */
export async function writeDerived(
  repository: RevisionRepository,
  publisher: EventPublisher,
  write: DerivedWrite,
): Promise<{ record: RevisionRecord; previous: RevisionRecord | null }> {
  for (let attempt = 0; attempt < MAX_DERIVE_ATTEMPTS; attempt += 1) {
    const head = await repository.head(write.lineage);
    if (write.parentRevisionId !== undefined && write.parentRevisionId !== head?.revision_id) {
      throw staleConflict(write.lineage, write.parentRevisionId, head?.revision_id);
    }
    const config = validatedConfig(write.derive(head?.config ?? write.initial, head));
    const outcome = await repository.append({
      ...write.lineage,
      content_hash: contentHash(config),
      author: authorOf(write.caller),
      message: write.message,
      config,
      expected_parent: head?.revision_id ?? null,
    });
    if (!('kind' in outcome)) {
      await publishRevised(publisher, write.caller, outcome);
      return { record: outcome, previous: head };
    }
    if (write.parentRevisionId !== undefined && outcome.kind === 'stale') {
      throw staleConflict(write.lineage, write.parentRevisionId, outcome.head);
    }
  }
  throw new ServiceError('conflict', `agent ${write.lineage.agent_id} is being revised concurrently; retry`);
}

/**
 * Writes `config` as the lineage's new head as given (set_revision): a named
 * `parentRevisionId` must be the head. Publishes `agent.config.revised`.
 */
export async function writeWhole(
  repository: RevisionRepository,
  publisher: EventPublisher,
  write: Omit<DerivedWrite, 'initial' | 'derive'> & { readonly config: AgentConfigContent },
): Promise<RevisionRecord> {
  const config = validatedConfig(write.config);
  const outcome = await repository.append({
    ...write.lineage,
    content_hash: contentHash(config),
    author: authorOf(write.caller),
    message: write.message,
    config,
    expected_parent: write.parentRevisionId,
  });
  if ('kind' in outcome && outcome.kind === 'contended') {
    throw new ServiceError('conflict', `agent ${write.lineage.agent_id} is being revised concurrently; retry`);
  }
  if ('kind' in outcome) throw staleConflict(write.lineage, write.parentRevisionId, outcome.head);
  await publishRevised(publisher, write.caller, outcome);
  return outcome;
}
