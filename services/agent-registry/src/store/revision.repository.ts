import { randomUUID } from 'node:crypto';
import { isDuplicateKeyError, paginate } from '@ars/store';
import type { Collection, Page, Store } from '@ars/store';
import type { AgentConfigContent, IdentityQuad } from '@ars/contracts';

/**
 * One stored agent configuration revision of the admin tier. `_id` is the
 * revision id; `number` counts the agent's revisions from 1 within its
 * tenant and orders them (the head has the highest).
 */
export interface RevisionRecord {
  _id: string;
  tenant: string;
  agent_id: string;
  number: number;
  revision_id: string;
  /** Absent on an agent's first revision. */
  parent_revision_id?: string;
  /** `sha256:<hex>` of the canonical JSON of `config`. */
  content_hash: string;
  author: IdentityQuad;
  message?: string;
  /** ISO 8601 UTC. */
  created_at: string;
  config: AgentConfigContent;
}

/** What a new revision says; the repository assigns id, number and parent. */
export interface NewRevision {
  readonly tenant: string;
  readonly agent_id: string;
  readonly content_hash: string;
  readonly author: IdentityQuad;
  readonly message?: string | undefined;
  readonly config: AgentConfigContent;
  /** The head the writer expects (optimistic concurrency); absent: whatever the head is. */
  readonly expected_parent?: string | undefined;
}

/**
 * Why an append did not happen: `stale` when the expected parent is not the
 * head; `contended` when other writers kept taking the next number.
 */
export type AppendRefusal =
  { readonly kind: 'stale'; readonly head: string | undefined } | { readonly kind: 'contended' };

/** Revisions of agent configurations, per (tenant, agent id). */
export interface RevisionRepository {
  /**
   * Writes a new head revision on top of the current head. Race-free: a
   * unique index on (tenant, agent_id, number) lets exactly one of two
   * concurrent writers take a number; the loser retries on the new head, or
   * is refused `stale` when it named an expected parent (`contended` after
   * too many lost races).
   */
  append(revision: NewRevision): Promise<RevisionRecord | AppendRefusal>;
  head(tenant: string, agentId: string): Promise<RevisionRecord | null>;
  get(tenant: string, agentId: string, revisionId: string): Promise<RevisionRecord | null>;
  /** Newest first. */
  list(
    tenant: string,
    agentId: string,
    page: { limit: number; after?: string | undefined },
  ): Promise<Page<RevisionRecord>>;
}

/** Each lost race means another writer succeeded, so this bounds waiting, not correctness. */
const MAX_APPEND_ATTEMPTS = 64;

/** The store-backed {@link RevisionRepository}; creates its indexes. */
export async function createRevisionRepository(store: Store): Promise<RevisionRepository> {
  const revisions: Collection<RevisionRecord> = store.collection<RevisionRecord>('agent_config_revisions');
  await revisions.createIndex({ tenant: 1, agent_id: 1, number: 1 }, { unique: true });

  const head = (tenant: string, agentId: string) =>
    revisions.findOne({ tenant, agent_id: agentId }, { sort: { number: -1 } });

  async function append(revision: NewRevision): Promise<RevisionRecord | AppendRefusal> {
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt += 1) {
      const current = await head(revision.tenant, revision.agent_id);
      if (revision.expected_parent !== undefined && revision.expected_parent !== current?.revision_id) {
        return { kind: 'stale', head: current?.revision_id };
      }
      const revisionId = randomUUID();
      const record: RevisionRecord = {
        _id: revisionId,
        tenant: revision.tenant,
        agent_id: revision.agent_id,
        number: (current?.number ?? 0) + 1,
        revision_id: revisionId,
        ...(current === null ? {} : { parent_revision_id: current.revision_id }),
        content_hash: revision.content_hash,
        author: revision.author,
        ...(revision.message === undefined ? {} : { message: revision.message }),
        created_at: new Date().toISOString(),
        config: revision.config,
      };
      try {
        await revisions.insertOne(record);
        return record;
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        // Another writer took this number: look at the new head again.
      }
    }
    return { kind: 'contended' };
  }

  return {
    append,
    head,
    get: (tenant, agentId, revisionId) => revisions.findOne({ _id: revisionId, tenant, agent_id: agentId }),
    list: (tenant, agentId, page) =>
      paginate(
        revisions,
        { tenant, agent_id: agentId },
        {
          sortField: 'number',
          direction: 'desc',
          limit: page.limit,
          after: page.after,
        },
      ),
  };
}
