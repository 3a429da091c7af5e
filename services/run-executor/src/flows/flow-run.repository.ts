import type { TaskStatus } from '@ars/contracts';
import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Filter, Store, StoreDocument } from '@ars/store';
import type { FlowUsageFigures } from './progress.ts';

/** The flow runs collection: one document per flow run, keyed by its run id. */
export const FLOW_RUNS_COLLECTION = 'flow_runs';

/** A step's state in a flow run. */
export type FlowStepStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled' | 'skipped';

/** One step of a stored flow run, in definition order. */
export interface FlowStepRecord {
  step_id: string;
  type: 'run' | 'parallel' | 'branch';
  status: FlowStepStatus;
  /** 1 for the first try of the step (the children's spawn keys carry it). */
  attempt: number;
  child_task_ids: string[];
  /** Each child's answer, by branch (empty when it gave none). */
  answers?: string[];
  answer?: string;
  error_code?: string;
  /** LLM tokens (in + out) of the step's children, as last read. */
  tokens?: number;
  /** Cost of the step's children in USD, as last read. */
  cost_usd?: number;
  /** A branch's choice. */
  next?: string;
  started_at?: string;
  ended_at?: string;
}

/** How a flow run ended, saved before its parent task is marked terminal (a crash in between ends it the same way). */
export interface FlowOutcomeRecord {
  status: 'complete' | 'failed' | 'cancelled';
  error_code?: string;
  reason?: string;
}

/** A stored flow run. */
export interface FlowRunRecord extends StoreDocument {
  _id: string;
  run_id: string;
  flow_id: string;
  /** The flow's display name (`flow.budget_exceeded` FlowName). */
  flow_name: string;
  flow_version: string;
  tenant: string;
  user: string;
  session: string;
  /** The parent task (kind `flow`). */
  task_id: string;
  idempotency_key?: string;
  /** `idempotencyScope(triple, key)`, under a sparse unique index: one flow run per key and triple. */
  idempotency_scope?: string;
  /**
   * The definition the run was started with, as JSON text: a reload of the
   * file never changes a run in flight, and text keeps JSON Schema's `$`
   * members (which the store refuses as field names).
   */
  definition_json: string;
  input_json: string;
  status: TaskStatus;
  /** Index of the step to run next; the number of steps once every step is done. */
  cursor: number;
  steps: FlowStepRecord[];
  usage: FlowUsageFigures;
  answer?: string;
  error_code?: string;
  budget_axis?: string;
  outcome?: FlowOutcomeRecord;
  created_at: string;
  started_at: string;
  updated_at: string;
  ended_at?: string;
}

/** The members the flow driver writes as a run goes on. */
export type FlowRunProgress = Partial<
  Pick<
    FlowRunRecord,
    'status' | 'cursor' | 'steps' | 'usage' | 'answer' | 'error_code' | 'budget_axis' | 'outcome' | 'ended_at'
  >
>;

/** Flow runs: written by `flows.run` and the flow driver, read by the flows.* reads. */
export interface FlowRunRepository {
  /** Inserts the run unless its idempotency scope has one: then that one, `reused`. */
  insert(run: FlowRunRecord): Promise<{ run: FlowRunRecord; reused: boolean }>;
  get(runId: string): Promise<FlowRunRecord | null>;
  getByTask(taskId: string): Promise<FlowRunRecord | null>;
  /** Writes the driver's progress (the driver, holding the parent's lease, is the only writer). */
  update(runId: string, progress: FlowRunProgress): Promise<void>;
  find(filter: Filter<FlowRunRecord>, options: { limit: number }): Promise<FlowRunRecord[]>;
  readonly collection: Collection<FlowRunRecord>;
  /** Deletes a session's flow runs (part of its erasure); returns how many. */
  eraseSession(owner: { tenant: string; user: string; session: string }): Promise<number>;
}

/** The store-backed repository (creates its indexes). */
export async function createFlowRunRepository(store: Store): Promise<FlowRunRepository> {
  const runs = store.collection<FlowRunRecord>(FLOW_RUNS_COLLECTION);
  await Promise.all([
    runs.createIndex({ idempotency_scope: 1 }, { unique: true, sparse: true }),
    runs.createIndex({ task_id: 1 }),
    runs.createIndex({ tenant: 1, flow_id: 1, started_at: -1 }),
    runs.createIndex({ started_at: -1 }),
  ]);
  return {
    collection: runs,
    async insert(run) {
      try {
        await runs.insertOne(run);
        return { run, reused: false };
      } catch (error) {
        if (!isDuplicateKeyError(error) || run.idempotency_scope === undefined) throw error;
        const existing = await runs.findOne({ idempotency_scope: run.idempotency_scope });
        if (existing === null) throw error;
        return { run: existing, reused: true };
      }
    },
    get: (runId) => runs.findOne({ _id: runId }),
    getByTask: (taskId) => runs.findOne({ task_id: taskId }),
    async update(runId, progress) {
      await runs.updateOne({ _id: runId }, { $set: { ...progress, updated_at: new Date().toISOString() } });
    },
    find: (filter, { limit }) => runs.find(filter, { sort: { started_at: -1, _id: -1 }, limit }),
    eraseSession: async (owner) =>
      (await runs.deleteMany({ tenant: owner.tenant, user: owner.user, session: owner.session })).deletedCount,
  };
}
