import { TASK_STATUSES } from '@ars/contracts';
import type { StatusCounts, TaskStatus } from '@ars/contracts';
import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Filter, Store } from '@ars/store';
import type { SessionTriple } from '../domain/session.ts';

/** Collection of the per-session task projection (the latest status of each task seen on the stream). */
export const SESSION_TASKS_COLLECTION = 'session_tasks';
/** Collection of the per-session artifact projection (artifacts uploaded and not deleted). */
export const SESSION_ARTIFACTS_COLLECTION = 'session_artifacts';

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
}

/** Projections behind `sessions.inspect` counters, fed by the event consumers. */
export interface ProjectionRepository {
  ensureIndexes(): Promise<void>;
  /** Sets the task's status unless a later event already did. */
  applyTask(triple: SessionTriple, taskId: string, status: TaskStatus, sequence: number): Promise<TaskApplied>;
  taskCounts(triple: SessionTriple): Promise<StatusCounts>;
  /** How many tasks of the session have been seen. */
  taskTotal(triple: SessionTriple): Promise<number>;
  addArtifact(triple: SessionTriple, artifactId: string): Promise<void>;
  removeArtifact(triple: SessionTriple, artifactId: string): Promise<void>;
  artifactCount(triple: SessionTriple): Promise<number>;
  /** Deletes every projection row of the session; returns how many. */
  deleteSession(triple: SessionTriple): Promise<number>;
}

function ownedBy(triple: SessionTriple): Filter<OwnedDoc> {
  return { tenant: triple.tenant, user: triple.user, session_id: triple.session };
}

function rowId(triple: SessionTriple, id: string): string {
  return JSON.stringify([triple.tenant, triple.user, triple.session, id]);
}

/** The store-backed projections. */
export function createProjectionRepository(store: Store): ProjectionRepository {
  const tasks: Collection<SessionTaskDoc> = store.collection<SessionTaskDoc>(SESSION_TASKS_COLLECTION);
  const artifacts: Collection<SessionArtifactDoc> = store.collection<SessionArtifactDoc>(SESSION_ARTIFACTS_COLLECTION);
  const owner = (triple: SessionTriple) => ({ tenant: triple.tenant, user: triple.user, session_id: triple.session });

  async function applyTask(
    triple: SessionTriple,
    taskId: string,
    status: TaskStatus,
    sequence: number,
  ): Promise<TaskApplied> {
    const _id = rowId(triple, taskId);
    const existing = await tasks.findOne({ _id });
    if (existing === null) {
      try {
        await tasks.insertOne({ _id, ...owner(triple), task_id: taskId, status, last_sequence: sequence });
        return { isNew: true };
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        return applyTask(triple, taskId, status, sequence); // a racing insert won: update it instead
      }
    }
    if (existing.last_sequence < sequence) {
      await tasks.updateOne({ _id, last_sequence: { $lt: sequence } }, { $set: { status, last_sequence: sequence } });
    }
    return { prior: existing.status, isNew: false };
  }

  return {
    async ensureIndexes() {
      await tasks.createIndex({ tenant: 1, user: 1, session_id: 1, status: 1 });
      await artifacts.createIndex({ tenant: 1, user: 1, session_id: 1 });
    },

    applyTask,

    async taskCounts(triple) {
      const counts = await Promise.all(
        TASK_STATUSES.map((status) => tasks.countDocuments({ ...ownedBy(triple), status } as Filter<SessionTaskDoc>)),
      );
      return Object.fromEntries(TASK_STATUSES.map((status, i) => [status, counts[i] ?? 0])) as StatusCounts;
    },

    taskTotal: (triple) => tasks.countDocuments(ownedBy(triple) as Filter<SessionTaskDoc>),

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
      ]);
      return t.deletedCount + a.deletedCount;
    },
  };
}
