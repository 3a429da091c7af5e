import { TASK_STATUSES } from '@ars/contracts';
import type { StatusCounts, TaskStatus } from '@ars/contracts';
import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Filter, IndexSpec, Store } from '@ars/store';
import type { SessionTriple } from '../domain/session.ts';

/** Collection of the per-session task projection (the latest status of each task seen on the stream). */
export const SESSION_TASKS_COLLECTION = 'session_tasks';
/** Collection of the per-session artifact projection (artifacts uploaded and not deleted). */
export const SESSION_ARTIFACTS_COLLECTION = 'session_artifacts';
/** Collection of the per-session task totals (one row per session, see {@link ProjectionRepository.taskTotal}). */
export const SESSION_TASK_TOTALS_COLLECTION = 'session_task_totals';

interface OwnedDoc {
  _id: string;
  tenant: string;
  user: string;
  session_id: string;
}

/** A task as this service last saw it. */
export interface SessionTaskDoc extends OwnedDoc {
  task_id: string;
  status: TaskStatus;
  /** Stream sequence of the event that set `status`; older events never overwrite it. */
  last_sequence: number;
}

/** How many tasks a session has had; `last_counted` makes a repeated count of one task a no-op. */
interface TaskTotalDoc extends OwnedDoc {
  total: number;
  last_counted: string;
}

/** An artifact of a session. */
export interface SessionArtifactDoc extends OwnedDoc {
  artifact_id: string;
}

/** The outcome of applying one task event. */
export interface TaskApplied {
  /** The status before, when the task was known. */
  readonly prior?: TaskStatus;
  /** True the first time the task is seen. */
  readonly isNew: boolean;
  /** The session's total once this call counted the task (absent when another call counted it). */
  readonly total?: number;
}

/** Projections behind `sessions.inspect` counters, fed by the event consumers. */
export interface ProjectionRepository {
  ensureIndexes(): Promise<void>;
  /**
   * Sets the task's status unless a later event already did. `firstSeen`
   * (the task's spawn) tries the insert first, any other event the update:
   * one store operation on the common path, either way the same outcome.
   */
  applyTask(
    triple: SessionTriple,
    taskId: string,
    status: TaskStatus,
    sequence: number,
    firstSeen?: boolean,
  ): Promise<TaskApplied>;
  /** Exact counts by status (a read of the session's rows); also repairs the session's total. */
  taskCounts(triple: SessionTriple): Promise<StatusCounts>;
  /**
   * How many tasks of the session have been seen: a counter kept by
   * {@link applyTask}, one read whatever the session's size. A crash between
   * a task's first row and its count can leave it one short (rarely, one
   * over, when that task's event is redelivered after others); the next
   * {@link taskCounts} sets it right. Sessions without a counter are counted.
   */
  taskTotal(triple: SessionTriple): Promise<number>;
  addArtifact(triple: SessionTriple, artifactId: string): Promise<void>;
  removeArtifact(triple: SessionTriple, artifactId: string): Promise<void>;
  artifactCount(triple: SessionTriple): Promise<number>;
  /** Deletes every projection row of the session; returns how many. */
  deleteSession(triple: SessionTriple): Promise<number>;
}

function rowId(triple: SessionTriple, id: string): string {
  return JSON.stringify([triple.tenant, triple.user, triple.session, id]);
}

function totalId(triple: SessionTriple): string {
  return JSON.stringify([triple.tenant, triple.user, triple.session]);
}

/**
 * The rows of one session: a range of `_id`s. Every row's `_id` is the JSON
 * array `["<tenant>","<user>","<session>","<id>"]`, so the rows of a triple
 * are exactly those starting with `["<tenant>","<user>","<session>","` (JSON
 * strings end at their closing quote: no other triple shares the prefix).
 * Both stores answer a range from their `_id` index, reading only the
 * session's rows; the owner fields are matched too.
 */
function ownedBy(triple: SessionTriple): Filter<OwnedDoc> {
  const prefix = JSON.stringify([triple.tenant, triple.user, triple.session]).slice(0, -1) + ',';
  return {
    _id: { $gte: `${prefix}"`, $lt: `${prefix}#` },
    tenant: triple.tenant,
    user: triple.user,
    session_id: triple.session,
  };
}

/**
 * Secondary indexes where compound indexes serve reads (MongoDB, the sqlite
 * engine): a session's artifacts read only its rows. On the nedb engine,
 * whose indexes keep one list per key, reads go by `_id` ranges instead, so
 * it keeps none and drops those an earlier version made.
 */
const ARTIFACT_INDEXES: readonly IndexSpec[] = [{ tenant: 1, user: 1, session_id: 1 }];
/**
 * Indexes of the task rows that earlier versions made, dropped on every
 * engine: every read of the rows is a range of their `_id`s (see
 * {@link ownedBy}), and a status-keyed index cost two entry writes at every
 * status change (two of the three task events of a run).
 */
const RETIRED_TASK_INDEXES: readonly IndexSpec[] = [{ tenant: 1, user: 1, session_id: 1, status: 1 }];

/** The store-backed projections. */
export function createProjectionRepository(store: Store): ProjectionRepository {
  const tasks: Collection<SessionTaskDoc> = store.collection<SessionTaskDoc>(SESSION_TASKS_COLLECTION);
  const artifacts: Collection<SessionArtifactDoc> = store.collection<SessionArtifactDoc>(SESSION_ARTIFACTS_COLLECTION);
  const totals: Collection<TaskTotalDoc> = store.collection<TaskTotalDoc>(SESSION_TASK_TOTALS_COLLECTION);
  const owner = (triple: SessionTriple) => ({ tenant: triple.tenant, user: triple.user, session_id: triple.session });

  async function applyTask(
    triple: SessionTriple,
    taskId: string,
    status: TaskStatus,
    sequence: number,
    firstSeen = false,
  ): Promise<TaskApplied> {
    const _id = rowId(triple, taskId);
    if (firstSeen) {
      const inserted = await insertTask(triple, _id, taskId, status, sequence);
      if (inserted !== undefined) return inserted;
    }
    for (;;) {
      const before = await tasks.findOneAndUpdate(
        { _id, last_sequence: { $lt: sequence } },
        { $set: { status, last_sequence: sequence } },
        { returnDocument: 'before' },
      );
      if (before !== null) return { prior: before.status, isNew: false };
      // Nothing updated: a later (or this) event set the row already, or there is none yet.
      const existing = await tasks.findOne({ _id });
      if (existing !== null) return { prior: existing.status, isNew: false };
      const inserted = await insertTask(triple, _id, taskId, status, sequence);
      if (inserted !== undefined) return inserted;
      // A racing insert won between the read and ours: update it instead.
    }
  }

  /** The task's first row, counted; undefined when a row exists already. */
  async function insertTask(
    triple: SessionTriple,
    _id: string,
    taskId: string,
    status: TaskStatus,
    sequence: number,
  ): Promise<TaskApplied | undefined> {
    try {
      await tasks.insertOne({ _id, ...owner(triple), task_id: taskId, status, last_sequence: sequence });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      return undefined;
    }
    const total = await countTask(triple, taskId);
    return total === undefined ? { isNew: true } : { isNew: true, total };
  }

  /**
   * Adds one to the session's total, once per task even when the same task's
   * count is retried; the total after, undefined when this task was counted
   * already (so that its spawn needs no read of the total).
   */
  async function countTask(triple: SessionTriple, taskId: string): Promise<number | undefined> {
    try {
      const after = await totals.findOneAndUpdate(
        { _id: totalId(triple), last_counted: { $ne: taskId } },
        { $inc: { total: 1 }, $set: { last_counted: taskId }, $setOnInsert: owner(triple) },
        { upsert: true, returnDocument: 'after' },
      );
      return after?.total;
    } catch (error) {
      // The row exists and counted this task already (the upsert's insert collided).
      if (!isDuplicateKeyError(error)) throw error;
      return undefined;
    }
  }

  /** The exact number of the session's rows, by status. */
  async function countRows(triple: SessionTriple): Promise<StatusCounts> {
    const rows = await tasks.find(ownedBy(triple) as Filter<SessionTaskDoc>, { projection: { status: 1 } });
    const counts = Object.fromEntries(TASK_STATUSES.map((status) => [status, 0])) as StatusCounts;
    for (const row of rows) counts[row.status] += 1;
    return counts;
  }

  async function setTotal(triple: SessionTriple, total: number): Promise<void> {
    await totals.updateOne(
      { _id: totalId(triple) },
      { $set: { total }, $setOnInsert: owner(triple) },
      { upsert: true },
    );
  }

  return {
    async ensureIndexes() {
      const served = store.compoundIndexes;
      for (const keys of RETIRED_TASK_INDEXES) await tasks.dropIndex(keys);
      for (const keys of ARTIFACT_INDEXES) await (served ? artifacts.createIndex(keys) : artifacts.dropIndex(keys));
    },

    applyTask,

    async taskCounts(triple) {
      const [counts, counter] = await Promise.all([countRows(triple), totals.findOne({ _id: totalId(triple) })]);
      const total = TASK_STATUSES.reduce((sum, status) => sum + counts[status], 0);
      if (counter !== null && counter.total !== total) await setTotal(triple, total);
      return counts;
    },

    async taskTotal(triple) {
      const counter = await totals.findOne({ _id: totalId(triple) });
      if (counter !== null) return counter.total;
      const total = await tasks.countDocuments(ownedBy(triple) as Filter<SessionTaskDoc>);
      await setTotal(triple, total);
      return total;
    },

    async addArtifact(triple, artifactId) {
      try {
        await artifacts.insertOne({ _id: rowId(triple, artifactId), ...owner(triple), artifact_id: artifactId });
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
    },

    async removeArtifact(triple, artifactId) {
      await artifacts.deleteOne({ _id: rowId(triple, artifactId) });
    },

    artifactCount: (triple) => artifacts.countDocuments(ownedBy(triple) as Filter<SessionArtifactDoc>),

    async deleteSession(triple) {
      const [t, a] = await Promise.all([
        tasks.deleteMany(ownedBy(triple) as Filter<SessionTaskDoc>),
        artifacts.deleteMany(ownedBy(triple) as Filter<SessionArtifactDoc>),
        totals.deleteOne({ _id: totalId(triple) }),
      ]);
      return t.deletedCount + a.deletedCount;
    },
  };
}
