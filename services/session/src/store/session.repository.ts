import { isDuplicateKeyError, paginate } from '@ars/store';
import type { Collection, Filter, IndexSpec, Page, Store, Update } from '@ars/store';
import type { TitleSource } from '@ars/contracts';
import { IDLE_REASON, VISIBLE_STATES, isTombstone, sessionKey } from '../domain/session.ts';
import type { CatalogState, ErasureProgress, SessionDoc, SessionTriple } from '../domain/session.ts';

/** Collection of the session catalog. */
export const SESSIONS_COLLECTION = 'sessions';

/** The erasure steps whose results are kept on the tombstone. */
export type ErasureStep = 'tasks' | 'artifacts' | 'memory' | 'agent_config' | 'state' | 'events';

/** A page request over the catalog. */
export interface CatalogPageRequest {
  readonly filter: Filter<SessionDoc>;
  readonly sortField: 'last_seen_at' | 'created_at';
  readonly limit: number;
  readonly cursor?: string | undefined;
}

/** The session catalog: every write that changes a session's state is one atomic conditional update. */
export interface SessionRepository {
  ensureIndexes(): Promise<void>;
  find(triple: SessionTriple): Promise<SessionDoc | null>;
  /** Inserts an open session; `null` when it already exists (a racing first use). */
  insertOpen(triple: SessionTriple, at: string): Promise<SessionDoc | null>;
  /** Moves `last_seen_at` of an open session to `at`; false when it is not open. */
  touchOpen(triple: SessionTriple, at: string): Promise<boolean>;
  /** Reopens a closed session; returns it as it was before (for its closed reason), `null` when not closed. */
  reopen(triple: SessionTriple, at: string): Promise<SessionDoc | null>;
  /**
   * Activity seen on the event stream: `last_seen_at` moves forward only, and
   * only when `at` is {@link ACTIVITY_RESOLUTION_MS} or more past it. `seen`
   * is the entry as read earlier (`last_seen_at` never moves back): when it
   * is recent enough already, nothing is written.
   */
  noteActivity(triple: SessionTriple, at: string, seen?: Pick<SessionDoc, 'last_seen_at'>): Promise<void>;
  /**
   * A task spawned in a visible session: sets `last_task_id` and `task_count`
   * (the projection's total) and returns the entry after, in one write;
   * `null` when the session is not visible (unknown, or erased).
   */
  noteSpawn(triple: SessionTriple, task: { id: string; total: number }): Promise<SessionDoc | null>;
  /** Open sessions not seen since `cutoff`, oldest first. */
  findIdle(cutoff: string, limit: number): Promise<SessionDoc[]>;
  /** Closes an open session still idle since `cutoff`; false when it moved meanwhile. */
  closeIdle(id: string, cutoff: string, at: string): Promise<boolean>;
  page(request: CatalogPageRequest): Promise<Page<SessionDoc>>;
  /** Sets a manual title on a visible session; the updated entry, or `null` when there is none. */
  setManualTitle(triple: SessionTriple, title: string): Promise<SessionDoc | null>;
  /** Takes the one automatic-naming attempt of a session; false when it was taken or a title exists. */
  claimNaming(triple: SessionTriple): Promise<boolean>;
  /** Finishes the attempt: sets the automatic title unless a manual one arrived meanwhile. */
  finishNaming(triple: SessionTriple, title: string | undefined): Promise<boolean>;
  /**
   * Writes the tombstone (state `erasing`, title dropped) unless there is one,
   * creating the entry for a never-used id. Returns the entry after.
   */
  tombstone(triple: SessionTriple, at: string): Promise<SessionDoc>;
  /** Records a finished erasure step once (a concurrent run cannot overwrite its counts). */
  recordStep(id: string, step: ErasureStep, result: object, extra?: Partial<ErasureProgress>): Promise<void>;
  recordFailure(id: string, message: string): Promise<void>;
  markErased(id: string, erasedAt: string): Promise<void>;
  findErasing(limit: number): Promise<SessionDoc[]>;
}

/**
 * The one entry of a triple. `_id` is the triple's digest (`sessionKey`), so
 * every lookup goes through the `_id` index on both stores; the triple itself
 * is matched too (a digest collision could never return another's entry).
 */
function tripleFilter(triple: SessionTriple): Filter<SessionDoc> {
  return { _id: sessionKey(triple), tenant: triple.tenant, user: triple.user, session_id: triple.session };
}

/**
 * The catalog's secondary indexes, where compound indexes serve reads
 * (MongoDB, the sqlite engine): the triple (also unique by `_id`), the
 * reaper's idle scan and the lists. nedb answers from an index only on
 * equality over all of its fields, so there they would serve no read
 * (lookups go by `_id`; scans of the catalog are periodic or list reads) and
 * cost every touch (one per start) three compound-key tree updates: the nedb
 * engine keeps none and drops those an earlier version made.
 */
const CATALOG_INDEXES: readonly { keys: IndexSpec; unique?: boolean }[] = [
  { keys: { tenant: 1, user: 1, session_id: 1 }, unique: true },
  { keys: { status: 1, last_seen_at: 1 } },
  { keys: { tenant: 1, user: 1, last_seen_at: -1 } },
];

/**
 * The resolution of `last_seen_at` for activity seen on the stream: a later
 * event moves it only when it is at least this much newer. The idle reaper
 * counts in seconds, and a write per task event (three per run, each
 * updating two of the catalog's indexes) was the largest of the session
 * service's store operations under the runs benchmark.
 */
export const ACTIVITY_RESOLUTION_MS = 1_000;

/** The store-backed catalog. */
export function createSessionRepository(store: Store): SessionRepository {
  const sessions: Collection<SessionDoc> = store.collection<SessionDoc>(SESSIONS_COLLECTION);
  const visible = { $in: [...VISIBLE_STATES] };

  function newDoc(triple: SessionTriple, at: string, status: CatalogState): SessionDoc {
    return {
      _id: sessionKey(triple),
      tenant: triple.tenant,
      user: triple.user,
      session_id: triple.session,
      status,
      created_at: at,
      last_seen_at: at,
      task_count: 0,
    };
  }

  async function insertNew(doc: SessionDoc): Promise<SessionDoc | null> {
    try {
      await sessions.insertOne(doc);
      return doc;
    } catch (error) {
      if (isDuplicateKeyError(error)) return null;
      throw error;
    }
  }

  return {
    async ensureIndexes() {
      for (const { keys, unique } of CATALOG_INDEXES) {
        if (store.compoundIndexes) await sessions.createIndex(keys, unique === true ? { unique } : {});
        else await sessions.dropIndex(keys);
      }
    },

    find: (triple) => sessions.findOne(tripleFilter(triple)),

    insertOpen: (triple, at) => insertNew(newDoc(triple, at, 'open')),

    async touchOpen(triple, at) {
      const result = await sessions.updateOne(
        { ...tripleFilter(triple), status: 'open' },
        { $set: { last_seen_at: at } },
      );
      return result.matchedCount === 1;
    },

    reopen: (triple, at) =>
      sessions.findOneAndUpdate(
        { ...tripleFilter(triple), status: 'closed' },
        { $set: { status: 'open', last_seen_at: at }, $unset: { closed_at: '', closed_reason: '' } },
        { returnDocument: 'before' },
      ),

    noteSpawn: (triple, task) =>
      sessions.findOneAndUpdate(
        { ...tripleFilter(triple), status: visible },
        { $set: { last_task_id: task.id, task_count: task.total } },
        { returnDocument: 'after' },
      ),

    async noteActivity(triple, at, seen) {
      // Every task event of a run lands here within milliseconds of the
      // admission's touch: only a move of a second or more is written.
      const stale = new Date(Date.parse(at) - ACTIVITY_RESOLUTION_MS).toISOString();
      if (seen !== undefined && seen.last_seen_at >= stale) return;
      await sessions.updateOne(
        { ...tripleFilter(triple), status: visible, last_seen_at: { $lt: stale } },
        { $set: { last_seen_at: at } },
      );
    },

    findIdle: (cutoff, limit) =>
      sessions.find({ status: 'open', last_seen_at: { $lt: cutoff } }, { sort: { last_seen_at: 1 }, limit }),

    async closeIdle(id, cutoff, at) {
      const result = await sessions.updateOne(
        { _id: id, status: 'open', last_seen_at: { $lt: cutoff } },
        { $set: { status: 'closed', closed_at: at, closed_reason: IDLE_REASON } },
      );
      return result.modifiedCount === 1;
    },

    page: (request) =>
      paginate(sessions, request.filter, {
        sortField: request.sortField,
        direction: 'desc',
        limit: request.limit,
        after: request.cursor,
      }),

    setManualTitle: (triple, title) =>
      sessions.findOneAndUpdate(
        { ...tripleFilter(triple), status: visible },
        { $set: { title, title_source: 'manual' satisfies TitleSource } },
        { returnDocument: 'after' },
      ),

    async claimNaming(triple) {
      const result = await sessions.updateOne(
        { ...tripleFilter(triple), status: visible, naming: { $exists: false }, title: { $exists: false } },
        { $set: { naming: 'pending' } },
      );
      return result.modifiedCount === 1;
    },

    async finishNaming(triple, title) {
      if (title === undefined) {
        await sessions.updateOne(tripleFilter(triple), { $set: { naming: 'failed' } });
        return false;
      }
      const result = await sessions.updateOne(
        { ...tripleFilter(triple), status: visible, title: { $exists: false } },
        { $set: { naming: 'done', title, title_source: 'auto' } },
      );
      if (result.modifiedCount === 0) await sessions.updateOne(tripleFilter(triple), { $set: { naming: 'done' } });
      return result.modifiedCount === 1;
    },

    async tombstone(triple, at) {
      const erasure: ErasureProgress = { started_at: at, attempts: 0 };
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const updated = await sessions.findOneAndUpdate(
          { ...tripleFilter(triple), status: visible },
          { $set: { status: 'erasing', erasure }, $unset: { title: '', title_source: '', naming: '' } },
          { returnDocument: 'after' },
        );
        if (updated !== null) return updated;
        const existing = await sessions.findOne(tripleFilter(triple));
        if (existing !== null && isTombstone(existing.status)) return existing;
        if (existing === null) {
          const inserted = await insertNew({ ...newDoc(triple, at, 'erasing'), erasure });
          if (inserted !== null) return inserted;
        }
        // It changed between two reads: try again.
      }
      throw new Error('the session kept changing while its tombstone was written');
    },

    async recordStep(id, step, result, extra = {}) {
      const set: Record<string, unknown> = { [`erasure.${step}`]: result };
      for (const [key, value] of Object.entries(extra)) set[`erasure.${key}`] = value;
      const filter = { _id: id, status: 'erasing', [`erasure.${step}`]: { $exists: false } } as Filter<SessionDoc>;
      await sessions.updateOne(filter, { $set: set } as Update<SessionDoc>);
    },

    async recordFailure(id, message) {
      await sessions.updateOne(
        { _id: id, status: 'erasing' },
        { $set: { 'erasure.last_error': message }, $inc: { 'erasure.attempts': 1 } },
      );
    },

    async markErased(id, erasedAt) {
      await sessions.updateOne({ _id: id, status: 'erasing' }, { $set: { status: 'erased', erased_at: erasedAt } });
    },

    findErasing: (limit) => sessions.find({ status: 'erasing' }, { sort: { last_seen_at: 1 }, limit }),
  };
}
