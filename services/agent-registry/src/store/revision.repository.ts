import { randomUUID } from 'node:crypto';
import { isDuplicateKeyError, paginate } from '@ars/store';
import type { Collection, Page, Store } from '@ars/store';
import type { AgentConfigContent, IdentityQuad } from '@ars/contracts';

/**
 * One stored agent configuration revision: of the admin tier (per tenant and
 * agent id) or of a per-user variant (per tenant, user and agent id). `_id`
 * is the revision id; `number` counts the lineage's revisions from 1 and
 * orders them (the head has the highest).
 */
export interface RevisionRecord {
  _id: string;
  tenant: string;
  /** Per-user variant revisions only: the variant's owner. */
  user?: string;
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

/** One history of revisions: an agent of a tenant, or one user's variant of it. */
export interface Lineage {
  readonly tenant: string;
  readonly agent_id: string;
  /** Variant lineages only. */
  readonly user?: string | undefined;
}

/** What a new revision says; the repository assigns id, number and parent. */
export interface NewRevision extends Lineage {
  readonly content_hash: string;
  readonly author: IdentityQuad;
  readonly message?: string | undefined;
  readonly config: AgentConfigContent;
  /**
   * The head the writer expects (optimistic concurrency): a revision id, or
   * null for "no revision yet"; absent: whatever the head is.
   */
  readonly expected_parent?: string | null | undefined;
}

/**
 * Why an append did not happen: `stale` when the expected parent is not the
 * head; `contended` when other writers kept taking the next number.
 */
export type AppendRefusal =
  { readonly kind: 'stale'; readonly head: string | undefined } | { readonly kind: 'contended' };

/** Revisions of agent configurations, per {@link Lineage}. */
export interface RevisionRepository {
  /**
   * Writes a new head revision on top of the current head. Race-free: a
   * unique index on (tenant, agent_id, number) lets exactly one of two
   * concurrent writers take a number; the loser retries on the new head, or
   * is refused `stale` when it named an expected parent (`contended` after
   * too many lost races).
   */
  append(revision: NewRevision): Promise<RevisionRecord | AppendRefusal>;
  head(lineage: Lineage): Promise<RevisionRecord | null>;
  get(lineage: Lineage, revisionId: string): Promise<RevisionRecord | null>;
  /** Newest first. */
  list(lineage: Lineage, page: { limit: number; after?: string | undefined }): Promise<Page<RevisionRecord>>;
  /** How many revisions every lineage of an agent holds (all users' variants of it, for a variant repository). */
  countAgent(tenant: string, agentId: string): Promise<number>;
  /** Deletes every revision of every lineage of an agent; answers how many. */
  deleteAgent(tenant: string, agentId: string): Promise<number>;
  /** The ids of the tenant's agents that have a revision (each lineage's first), sorted, at most `limit`. */
  agentIds(tenant: string, limit: number): Promise<string[]>;
}

/** Where a repository keeps its revisions. */
export interface RevisionRepositoryOptions {
  /** @default `agent_config_revisions` (the admin tier) */
  readonly collection?: string;
  /** True for per-user variants: lineages include `user`. @default false */
  readonly perUser?: boolean;
}

/** Each lost race means another writer succeeded, so this bounds waiting, not correctness. */
const MAX_APPEND_ATTEMPTS = 64;

/** The admin tier's revisions (the default collection). */
export const REVISIONS_COLLECTION = 'agent_config_revisions';
/** The per-user variants' revisions. */
export const USER_REVISIONS_COLLECTION = 'agent_config_user_revisions';

/** The store-backed {@link RevisionRepository}; creates its indexes. */
export async function createRevisionRepository(
  store: Store,
  options: RevisionRepositoryOptions = {},
): Promise<RevisionRepository> {
  const perUser = options.perUser ?? false;
  const revisions: Collection<RevisionRecord> = store.collection<RevisionRecord>(
    options.collection ?? REVISIONS_COLLECTION,
    { cacheReads: true },
  );
  await revisions.createIndex(
    perUser ? { tenant: 1, user: 1, agent_id: 1, number: 1 } : { tenant: 1, agent_id: 1, number: 1 },
    { unique: true },
  );

  const filterOf = (lineage: Lineage) => {
    if (perUser && lineage.user === undefined) throw new Error('a variant lineage needs a user');
    return perUser
      ? { tenant: lineage.tenant, user: lineage.user, agent_id: lineage.agent_id }
      : { tenant: lineage.tenant, agent_id: lineage.agent_id };
  };

  const head = (lineage: Lineage) => revisions.findOne(filterOf(lineage), { sort: { number: -1 } });

  function recordOf(revision: NewRevision, current: RevisionRecord | null): RevisionRecord {
    const revisionId = randomUUID();
    return {
      _id: revisionId,
      tenant: revision.tenant,
      ...(perUser ? { user: revision.user } : {}),
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
  }

  async function append(revision: NewRevision): Promise<RevisionRecord | AppendRefusal> {
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt += 1) {
      const current = await head(revision);
      const expected = revision.expected_parent;
      if (expected !== undefined && expected !== (current?.revision_id ?? null)) {
        return { kind: 'stale', head: current?.revision_id };
      }
      const record = recordOf(revision, current);
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
    get: (lineage, revisionId) => revisions.findOne({ _id: revisionId, ...filterOf(lineage) }),
    list: (lineage, page) =>
      paginate(revisions, filterOf(lineage), {
        sortField: 'number',
        direction: 'desc',
        limit: page.limit,
        after: page.after,
      }),
    countAgent: (tenant, agentId) => revisions.countDocuments({ tenant, agent_id: agentId }),
    deleteAgent: async (tenant, agentId) => (await revisions.deleteMany({ tenant, agent_id: agentId })).deletedCount,
    agentIds: async (tenant, limit) => {
      const firsts = await revisions.find({ tenant, number: 1 }, { sort: { agent_id: 1 }, limit });
      return [...new Set(firsts.map((r) => r.agent_id))];
    },
  };
}
