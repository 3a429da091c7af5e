import { isDuplicateKeyError, paginate } from '@ars/store';
import type { Collection, Filter, Page, Store } from '@ars/store';
import type { StateRecordKind } from '@ars/contracts';
import type { SessionTriple } from '../domain/session.ts';
import type { StateRecordDoc } from '../domain/state-records.ts';

/** Collection of the sessions' state records. */
export const STATE_RECORDS_COLLECTION = 'state_records';

/** Which records of a session a history read wants. */
export interface HistoryQuery {
  readonly triple: SessionTriple;
  readonly taskId?: string | undefined;
  readonly kinds?: readonly StateRecordKind[] | undefined;
  /** Inclusive, ISO UTC. */
  readonly since?: string | undefined;
  /** Exclusive, ISO UTC. */
  readonly until?: string | undefined;
  readonly limit: number;
  readonly cursor?: string | undefined;
}

/** The state records, keyed by source event so that redelivery inserts nothing twice. */
export interface StateRecordRepository {
  ensureIndexes(): Promise<void>;
  /** Inserts the record; false when it was already there. */
  insert(record: StateRecordDoc): Promise<boolean>;
  /** Inserts the records (one store operation when none was there), skipping those already there. */
  insertAll(records: readonly StateRecordDoc[]): Promise<void>;
  /** Oldest first. */
  page(query: HistoryQuery): Promise<Page<StateRecordDoc>>;
  deleteByIds(ids: readonly string[]): Promise<number>;
  deleteSession(triple: SessionTriple): Promise<number>;
  count(triple: SessionTriple): Promise<number>;
}

function ownedBy(triple: SessionTriple): Filter<StateRecordDoc> {
  return { tenant: triple.tenant, user: triple.user, session_id: triple.session };
}

/** The store-backed state records. */
export function createStateRecordRepository(store: Store): StateRecordRepository {
  const records: Collection<StateRecordDoc> = store.collection<StateRecordDoc>(STATE_RECORDS_COLLECTION);

  async function insert(record: StateRecordDoc): Promise<boolean> {
    try {
      await records.insertOne(record);
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  return {
    async ensureIndexes() {
      // For history pages (MongoDB, sqlite). nedb could not use it (it answers
      // from an index only on equality over all of its fields) and every insert
      // would pay for it: on nedb history reads scan instead.
      const keys = { tenant: 1, user: 1, session_id: 1, seq: 1 } as const;
      if (store.compoundIndexes) await records.createIndex(keys);
      else await records.dropIndex(keys);
    },

    insert,

    async insertAll(list) {
      const [only] = list;
      if (list.length === 1 && only !== undefined) {
        await insert(only);
        return;
      }
      try {
        await records.insertMany(list);
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        // A redelivery: some were there (the embedded store inserted none of them, MongoDB those before the one
        // it met): one by one, each taken or found.
        for (const record of list) await insert(record);
      }
    },

    page(query) {
      const filter: Filter<StateRecordDoc> = { ...ownedBy(query.triple) };
      if (query.taskId !== undefined) filter.task_id = query.taskId;
      if (query.kinds !== undefined) filter.kind = { $in: [...query.kinds] };
      if (query.since !== undefined || query.until !== undefined) {
        filter.occurred_at = {
          ...(query.since === undefined ? {} : { $gte: query.since }),
          ...(query.until === undefined ? {} : { $lt: query.until }),
        };
      }
      return paginate(records, filter, { sortField: 'seq', direction: 'asc', limit: query.limit, after: query.cursor });
    },

    async deleteByIds(ids) {
      if (ids.length === 0) return 0;
      return (await records.deleteMany({ _id: { $in: [...ids] } })).deletedCount;
    },

    async deleteSession(triple) {
      return (await records.deleteMany(ownedBy(triple))).deletedCount;
    },

    count: (triple) => records.countDocuments(ownedBy(triple)),
  };
}
