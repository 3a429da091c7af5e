import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Store } from '@ars/store';
import type { IdentityQuad } from '@ars/contracts';

/**
 * The retirement state of one agent of a tenant (one record per agent; a
 * reinstated agent keeps it, so the next retirement counts the generation on).
 */
export interface RetirementRecord {
  /** JSON of [tenant, agent_id]. */
  _id: string;
  tenant: string;
  agent_id: string;
  /** `retiring` while stages remain, `retired` once completed, `reinstated` after a later set_revision. */
  state: 'retiring' | 'retired' | 'reinstated';
  /** 1 for the agent's first retirement, counting on. */
  generation: number;
  operation_hash: string;
  /** The last stage done: `started`, a release stage, or `completed`. */
  stage: string;
  completed: number;
  total: number;
  head_revision_id: string;
  author: IdentityQuad;
  reason?: string;
  /** ISO 8601 UTC. */
  started_at: string;
  completed_at?: string;
}

/** Retirement records. */
export interface RetirementRepository {
  get(tenant: string, agentId: string): Promise<RetirementRecord | null>;
  /**
   * Starts a retirement unless one is under way or done: answers the new
   * record, or null when another record is `retiring`/`retired` (read it).
   */
  begin(record: Omit<RetirementRecord, '_id'>): Promise<RetirementRecord | null>;
  /**
   * Records a finished stage, if the stored record is still at `record.stage`
   * (compare-and-set): null when another runner advanced it first.
   */
  advance(record: RetirementRecord, stage: string, completed: number): Promise<RetirementRecord | null>;
  /** Marks the retirement done, with the same compare-and-set. */
  complete(record: RetirementRecord, completed: number): Promise<RetirementRecord | null>;
  /** Marks a retired agent reinstated (a set_revision wrote a new head); no-op otherwise. */
  reinstate(tenant: string, agentId: string): Promise<void>;
}

const idOf = (tenant: string, agentId: string) => JSON.stringify([tenant, agentId]);

export const RETIREMENTS_COLLECTION = 'agent_retirements';

/** The store-backed {@link RetirementRepository}. */
export function createRetirementRepository(store: Store): RetirementRepository {
  const retirements: Collection<RetirementRecord> = store.collection<RetirementRecord>(RETIREMENTS_COLLECTION, {
    cacheReads: true,
  });

  const update = (record: RetirementRecord, set: Partial<RetirementRecord>) =>
    retirements.findOneAndUpdate(
      { _id: record._id, state: 'retiring', stage: record.stage },
      { $set: set },
      { returnDocument: 'after' },
    );

  return {
    get: (tenant, agentId) => retirements.findOne({ _id: idOf(tenant, agentId) }),
    begin: async (record) => {
      const _id = idOf(record.tenant, record.agent_id);
      try {
        // Matches only a reinstated record; with none at all the upsert inserts, and
        // a retiring or retired record makes the insert collide on _id.
        const stored = await retirements.findOneAndUpdate(
          { _id, state: 'reinstated' },
          { $set: { ...record } },
          { upsert: true, returnDocument: 'after' },
        );
        return stored;
      } catch (error) {
        if (isDuplicateKeyError(error)) return null;
        throw error;
      }
    },
    advance: (record, stage, completed) => update(record, { stage, completed }),
    complete: (record, completed) =>
      update(record, {
        state: 'retired',
        stage: 'completed',
        completed,
        total: Math.max(record.total, completed),
        completed_at: new Date().toISOString(),
      }),
    reinstate: async (tenant, agentId) => {
      await retirements.updateOne({ _id: idOf(tenant, agentId), state: 'retired' }, { $set: { state: 'reinstated' } });
    },
  };
}
