import { isDuplicateKeyError, paginate } from '@ars/store';
import type { Collection, Page, Store } from '@ars/store';
import { ownerKey } from '../domain/skills.ts';
import type { SkillOwner, SkillScope } from '../domain/skills.ts';

/** One stored skill. `_id` is the JSON of its owner key and name. */
export interface SkillRecord {
  _id: string;
  /** {@link ownerKey} of its owner: one equality selects an owner's skills. */
  owner: string;
  tenant: string;
  scope: SkillScope;
  agent_id?: string;
  user?: string;
  session?: string;
  name: string;
  description?: string;
  content: string;
  triggers: string[];
  origin: string;
  /** `sha256:` of the skill as written (see `skillContentHash`). */
  content_hash: string;
  /** ISO 8601 UTC. */
  created_at: string;
  updated_at: string;
}

/** The members an upsert writes. */
export type SkillContent = Pick<SkillRecord, 'name' | 'content' | 'triggers' | 'origin' | 'content_hash'> & {
  readonly description?: string | undefined;
};

/** Skills by owner and name. */
export interface SkillRepository {
  get(owner: SkillOwner, name: string): Promise<SkillRecord | null>;
  /**
   * Writes `skill` under its name when what is stored is still `expected`
   * (null: nothing yet). Answers the stored record, or null when another
   * writer got there first (the caller decides again on a fresh read).
   */
  put(owner: SkillOwner, skill: SkillContent, expected: SkillRecord | null): Promise<SkillRecord | null>;
  delete(owner: SkillOwner, name: string): Promise<boolean>;
  /** By name, ascending. */
  list(owner: SkillOwner, page: { limit: number; after?: string | undefined }): Promise<Page<SkillRecord>>;
  /** Every skill of these owners (the effective configuration's candidates), at most `limit`. */
  ofOwners(owners: readonly SkillOwner[], limit: number): Promise<SkillRecord[]>;
  countAgent(tenant: string, agentId: string): Promise<number>;
  /** Deletes the skills scoped to an agent; answers how many. */
  deleteAgent(tenant: string, agentId: string): Promise<number>;
  /** Deletes the skills of one session (the session-user tier); answers how many. */
  deleteSession(triple: { tenant: string; user: string; session: string }): Promise<number>;
}

const idOf = (owner: SkillOwner, name: string) => JSON.stringify([ownerKey(owner), name]);

export const SKILLS_COLLECTION = 'agent_config_skills';

/** The store-backed {@link SkillRepository}; creates its indexes. */
export async function createSkillRepository(store: Store): Promise<SkillRepository> {
  const skills: Collection<SkillRecord> = store.collection<SkillRecord>(SKILLS_COLLECTION, { cacheReads: true });
  await skills.createIndex({ owner: 1, name: 1 });
  await skills.createIndex({ tenant: 1, agent_id: 1 });

  async function put(owner: SkillOwner, skill: SkillContent, expected: SkillRecord | null) {
    const now = new Date().toISOString();
    const members = {
      name: skill.name,
      content: skill.content,
      triggers: skill.triggers,
      origin: skill.origin,
      content_hash: skill.content_hash,
      updated_at: now,
    };
    if (expected === null) {
      const record: SkillRecord = {
        _id: idOf(owner, skill.name),
        owner: ownerKey(owner),
        tenant: owner.tenant,
        scope: owner.scope,
        ...(owner.agent_id === undefined ? {} : { agent_id: owner.agent_id }),
        ...(owner.user === undefined ? {} : { user: owner.user }),
        ...(owner.session === undefined ? {} : { session: owner.session }),
        ...members,
        ...(skill.description === undefined ? {} : { description: skill.description }),
        created_at: now,
      };
      try {
        await skills.insertOne(record);
        return record;
      } catch (error) {
        if (isDuplicateKeyError(error)) return null;
        throw error;
      }
    }
    return skills.findOneAndUpdate(
      {
        _id: expected._id,
        origin: expected.origin,
        content_hash: expected.content_hash,
        updated_at: expected.updated_at,
      },
      skill.description === undefined
        ? { $set: members, $unset: { description: '' } }
        : { $set: { ...members, description: skill.description } },
      { returnDocument: 'after' },
    );
  }

  return {
    get: (owner, name) => skills.findOne({ _id: idOf(owner, name) }),
    put,
    delete: async (owner, name) => (await skills.deleteOne({ _id: idOf(owner, name) })).deletedCount > 0,
    list: (owner, page) =>
      paginate(
        skills,
        { owner: ownerKey(owner) },
        { sortField: 'name', direction: 'asc', limit: page.limit, after: page.after },
      ),
    ofOwners: (owners, limit) =>
      skills.find({ owner: { $in: owners.map(ownerKey) } }, { sort: { name: 1, _id: 1 }, limit }),
    countAgent: (tenant, agentId) => skills.countDocuments({ tenant, scope: 'agent', agent_id: agentId }),
    deleteAgent: async (tenant, agentId) =>
      (await skills.deleteMany({ tenant, scope: 'agent', agent_id: agentId })).deletedCount,
    deleteSession: async ({ tenant, user, session }) =>
      (await skills.deleteMany({ owner: ownerKey({ tenant, scope: 'session', user, session }) })).deletedCount,
  };
}
