import { firstOf, isDuplicateKeyError, paginate } from '@ars/store';
import type { Collection, Filter, IndexSpec, Page, PageBudget, Store } from '@ars/store';
import { TASK_STATUSES, TERMINAL_TASK_STATUSES } from '@ars/contracts';
import type { TaskStatus } from '@ars/contracts';
import type { PauseRecord } from '../domain/pause.ts';
import type { ContextEntry, StepRecord, TaskRecord } from '../domain/task.ts';

/** The tasks collection. */
export const TASKS_COLLECTION = 'tasks';
/**
 * The pause records collection (see `PauseRecord`). The engine writes it;
 * `pause.list` reads it through {@link TaskRepository.listOpenPauses}.
 */
export const PAUSES_COLLECTION = 'pauses';

/**
 * A page request: `limit` items after `cursor` (the previous page's
 * `next_cursor`), and fewer when `budget` ends the page first.
 */
export interface PageRequest<T = unknown> {
  readonly limit: number;
  readonly cursor?: string | undefined;
  /** Ends the page by size as well (see `PageBudget` of @ars/store). */
  readonly budget?: PageBudget<T> | undefined;
  /**
   * The caller's scope, when the page's filter narrows it with conditions
   * the indexes do not settle (free text, a status): on the embedded store
   * the page then reads at most {@link EMBEDDED_PAGE_SCAN_LIMIT} documents of
   * it, and may hold fewer items than `limit`, or none, with a `next_cursor`
   * (see `PaginateOptions.scan` of @ars/store).
   */
  readonly scope?: Filter<T> | undefined;
}

/** The (tenant, user, session) of an erasure. */
export interface SessionTriple {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/**
 * The task store of the run-executor, for the API side and the engine.
 * Every state change is one atomic conditional update, so that two writers
 * (two executors, a control and the planner) never interleave: a terminal
 * task never changes again, and of several concurrent `markTerminal` calls
 * exactly one returns true.
 */
export interface TaskRepository {
  /**
   * Inserts a new `pending` task. When its `idempotency_scope` is taken (a
   * concurrent or earlier start with the same key in the same triple) the
   * existing task is returned with `reused: true` instead.
   */
  insertTask(task: TaskRecord): Promise<{ task: TaskRecord; reused: boolean }>;
  /** The task of an idempotency scope, if any. */
  findByIdempotencyScope(scope: string): Promise<TaskRecord | null>;
  getTask(taskId: string): Promise<TaskRecord | null>;
  /**
   * Moves a task to `running` (first claim: from `pending`, setting
   * `started_at`; a redelivery: from `running` or `paused`, unchanged
   * otherwise) and returns its prior status for `task.started` PriorState;
   * `null` when the task is missing or terminal (do not run it).
   */
  markRunning(taskId: string): Promise<TaskStatus | null>;
  /**
   * Moves a non-terminal task to a terminal status (with the ErrorCode of
   * `task.failed` when given) and sets `ended_at`. Returns true only for the
   * call that made the change: publish the terminal event only then.
   */
  markTerminal(
    taskId: string,
    status: 'complete' | 'failed' | 'cancelled',
    error?: { readonly code: string; readonly message?: string },
  ): Promise<boolean>;
  /** Rewrites the goal of a non-terminal task (redirect); false when terminal or missing. */
  setGoal(taskId: string, goal: string): Promise<boolean>;
  /** Sets the priority of a non-terminal task; returns the prior priority, or null when terminal or missing. */
  setPriority(taskId: string, priority: number): Promise<number | null>;
  /**
   * Records one planner step's cost and adds it to `cost_usd`. Idempotent per
   * step index (a redelivered run recording step 3 again changes nothing);
   * returns whether it was recorded now.
   */
  recordStep(taskId: string, step: Omit<StepRecord, 'recorded_at'>): Promise<boolean>;
  /** Appends context or a user message for the next planner step; idempotent per `event_id`. */
  appendContext(taskId: string, entry: Omit<ContextEntry, 'at'>): Promise<boolean>;
  /** Latches `background_acknowledged` true; true only for the call that latched it. */
  acknowledgeBackground(taskId: string): Promise<boolean>;
  /** Records the EVENTS sequence of the task's `task.spawned`. */
  setSpawnedSequence(taskId: string, sequence: number): Promise<void>;
  /** A page of tasks matching `filter`, newest first (`created_at`, then `_id`). */
  listTasks(filter: Filter<TaskRecord>, page: PageRequest<TaskRecord>): Promise<Page<TaskRecord>>;
  /**
   * How many tasks matching `filter` are in each status (every status
   * present). On the embedded store at most {@link EMBEDDED_COUNT_LIMIT}
   * tasks are counted, and when `filter` narrows `scope` (the caller's
   * scope) only among its newest {@link EMBEDDED_COUNT_LIMIT} tasks:
   * `complete` is false when either bound cut the count short, and each
   * count is then a lower bound.
   */
  countByStatus(filter: Filter<TaskRecord>, scope?: Filter<TaskRecord>): Promise<StatusTally>;
  /** A page of unresolved pause records matching `filter`, oldest first (`requested_at`, then `_id`). */
  listOpenPauses(filter: Filter<PauseRecord>, page: PageRequest<PauseRecord>): Promise<Page<PauseRecord>>;
  /** The unresolved human-approval gate of a task, if it waits for one (the oldest, should there be several). */
  openApproval(taskId: string): Promise<PauseRecord | null>;
  /** Deletes every task of a session (erasure); returns how many. */
  eraseSession(triple: SessionTriple): Promise<number>;
  /** Deletes a task its start withdrew before announcing it (its session was erased meanwhile). */
  withdrawTask(taskId: string): Promise<void>;
  /**
   * Up to `limit` tasks still `pending` whose run was queued before
   * `before` (ISO time), oldest first: candidates of the stale-run sweeper.
   */
  listQueuedBefore(before: string, limit: number): Promise<TaskRecord[]>;
  /**
   * Records that the sweeper queues a pending task's run again: only when the
   * task is still `pending` and has been queued again `requeues` times so far
   * (of several executors sweeping at once exactly one wins). Sets
   * `queued_at` to now and returns the new count, or null when another
   * sweeper or a claim came first.
   */
  markRequeued(taskId: string, requeues: number): Promise<number | null>;
}

/** What {@link TaskRepository.countByStatus} counted. */
export interface StatusTally {
  readonly counts: Record<TaskStatus, number>;
  /** False when counting stopped at {@link EMBEDDED_COUNT_LIMIT}: every count is then a lower bound. */
  readonly complete: boolean;
}

/**
 * Most tasks the embedded store reads to count a list's statuses. Its reads
 * run on the executor's own event loop, one document at a time: counting a
 * session of 100,000 tasks took 4.6 s in six passes (one per status), and no
 * run of the executor moved meanwhile; one pass over at most this many
 * takes tens of milliseconds. MongoDB counts in its own process, exactly.
 */
export const EMBEDDED_COUNT_LIMIT = 10_000;

/**
 * Most tasks of the caller's scope one page of a narrowed list (free text,
 * a status) reads on the embedded store: a search matching little read
 * every task of the scope for one page (100,000 tasks: 0.45 s of the
 * executor's event loop); a page now holds it for tens of milliseconds and
 * the caller follows `next_cursor`.
 */
export const EMBEDDED_PAGE_SCAN_LIMIT = 5_000;

const NOT_TERMINAL = { $nin: [...TERMINAL_TASK_STATUSES] };

/** The order of task lists: newest first (`created_at`, then `_id`); every task has its `created_at`. */
const NEWEST_FIRST = { sortField: 'created_at', direction: 'desc', sortValueAlways: true } as const;

/** Every status at zero, then `entries` set. */
function tally(entries: readonly (readonly [TaskStatus, number])[]): Record<TaskStatus, number> {
  const counts = Object.fromEntries(TASK_STATUSES.map((status) => [status, 0])) as Record<TaskStatus, number>;
  for (const [status, count] of entries) counts[status] = count;
  return counts;
}

function now(): string {
  return new Date().toISOString();
}

/** The compound indexes behind `tasks.list` and `search.tasks` (equality on the identity, newest first). */
const COMPOUND_LIST_INDEXES: readonly IndexSpec[] = [
  { tenant: 1, user: 1, session: 1, created_at: -1 },
  { tenant: 1, created_at: -1 },
];

/**
 * Brings the list indexes to what the store can use. MongoDB and the sqlite
 * engine serve the lists from the compound indexes (a page of a session's
 * tasks reads only that page). The nedb engine answers from an index only
 * on equality over every one of its fields and never sorts with one, so
 * there they would serve no read and cost every task write two compound-key
 * tree updates (a run writes its task about seven times); an index on
 * `session` alone would be worse, since nedb keeps one list per key and
 * scans the session's list on every write of its tasks. On nedb lists scan
 * instead, and the compound indexes an earlier version made are dropped.
 */
async function ensureListIndexes(store: Store, tasks: Collection<TaskRecord>): Promise<void> {
  const served = store.compoundIndexes;
  await Promise.all(COMPOUND_LIST_INDEXES.map((keys) => (served ? tasks.createIndex(keys) : tasks.dropIndex(keys))));
}

/** The store-backed {@link TaskRepository}; creates its indexes (idempotent). */
/** Bounds of the embedded store's task reads (tests set them small). */
export interface TaskReadLimits {
  /** @default {@link EMBEDDED_COUNT_LIMIT} */
  readonly countLimit?: number;
  /** @default {@link EMBEDDED_PAGE_SCAN_LIMIT} */
  readonly pageScanLimit?: number;
}

export async function createTaskRepository(store: Store, limits: TaskReadLimits = {}): Promise<TaskRepository> {
  const countLimit = limits.countLimit ?? EMBEDDED_COUNT_LIMIT;
  const pageScanLimit = limits.pageScanLimit ?? EMBEDDED_PAGE_SCAN_LIMIT;
  const tasks: Collection<TaskRecord> = store.collection<TaskRecord>(TASKS_COLLECTION);
  const pauses: Collection<PauseRecord> = store.collection<PauseRecord>(PAUSES_COLLECTION);
  await Promise.all([
    // Race-free idempotency: one task per (tenant, user, session, key); tasks without a key are left out.
    tasks.createIndex({ idempotency_scope: 1 }, { unique: true, sparse: true }),
    // Children of a run (the cascade at every run's end); sparse: top-level runs, nearly all, carry none.
    tasks.createIndex({ parent_task_id: 1 }, { sparse: true }),
    // Queued runs (the stale-run sweeper); sparse: `queued_at` leaves a task when its run is claimed or ends.
    tasks.createIndex({ queued_at: 1 }, { sparse: true }),
    ensureListIndexes(store, tasks),
    pauses.createIndex({ tenant: 1, user: 1, session: 1, requested_at: 1 }),
    pauses.createIndex({ task_id: 1 }),
  ]);

  const findByIdempotencyScope = (scope: string) => tasks.findOne({ idempotency_scope: scope });

  async function insertTask(task: TaskRecord): Promise<{ task: TaskRecord; reused: boolean }> {
    try {
      const inserted = tasks.insertOne(task);
      // A caller waits for the start's answer, which waits for this commit: not for the rest of the turn.
      store.commitSoon();
      await inserted;
      return { task, reused: false };
    } catch (error) {
      if (!isDuplicateKeyError(error) || task.idempotency_scope === undefined) throw error;
      const existing = await findByIdempotencyScope(task.idempotency_scope);
      if (existing === null) throw error;
      return { task: existing, reused: true };
    }
  }

  async function markRunning(taskId: string): Promise<TaskStatus | null> {
    const at = now();
    const claimed = await tasks.findOneAndUpdate(
      { _id: taskId, status: 'pending' },
      { $set: { status: 'running', started_at: at, updated_at: at }, $unset: { queued_at: '' } },
      { returnDocument: 'before' },
    );
    if (claimed !== null) return claimed.status;
    const redelivered = await tasks.findOneAndUpdate(
      { _id: taskId, status: { $in: ['running', 'paused'] } },
      { $set: { status: 'running', updated_at: at } },
      { returnDocument: 'before' },
    );
    return redelivered?.status ?? null;
  }

  async function markTerminal(
    taskId: string,
    status: 'complete' | 'failed' | 'cancelled',
    error?: { readonly code: string; readonly message?: string },
  ): Promise<boolean> {
    const at = now();
    const errorFields =
      error === undefined
        ? {}
        : { error_code: error.code, ...(error.message === undefined ? {} : { error_message: error.message }) };
    const result = await tasks.updateOne(
      { _id: taskId, status: NOT_TERMINAL },
      { $set: { status, ended_at: at, updated_at: at, ...errorFields }, $unset: { queued_at: '' } },
    );
    return result.matchedCount === 1;
  }

  async function setPriority(taskId: string, priority: number): Promise<number | null> {
    const before = await tasks.findOneAndUpdate(
      { _id: taskId, status: NOT_TERMINAL },
      { $set: { priority, updated_at: now() } },
      { returnDocument: 'before' },
    );
    return before?.priority ?? null;
  }

  async function countByStatus(filter: Filter<TaskRecord>, scope?: Filter<TaskRecord>): Promise<StatusTally> {
    if (store.kind === 'mongodb') {
      const counts = await Promise.all(
        TASK_STATUSES.map((status) => tasks.countDocuments({ $and: [filter, { status }] } as Filter<TaskRecord>)),
      );
      return { counts: tally(TASK_STATUSES.map((status, i) => [status, counts[i] ?? 0])), complete: true };
    }
    // A narrowing filter may match little: without this window, finding that out reads the whole scope.
    const newest =
      scope === undefined ? undefined : await firstOf(tasks, scope, { ...NEWEST_FIRST, limit: countLimit });
    const bounded = newest === undefined ? filter : ({ $and: [filter, newest] } as Filter<TaskRecord>);
    const found = await tasks.find(bounded, {
      projection: { status: 1 },
      limit: countLimit + 1,
      // In the list's order the store walks the window on its time index, instead of reading the whole scope.
      ...(newest === undefined ? {} : { sort: { created_at: -1, _id: -1 } }),
    });
    const counts = tally([]);
    for (const { status } of found.slice(0, countLimit)) {
      if (status in counts) counts[status] += 1;
    }
    return { counts, complete: newest === undefined && found.length <= countLimit };
  }

  return {
    insertTask,
    findByIdempotencyScope,
    getTask: (taskId) => tasks.findOne({ _id: taskId }),
    markRunning,
    markTerminal,
    setGoal: async (taskId, goal) =>
      (await tasks.updateOne({ _id: taskId, status: NOT_TERMINAL }, { $set: { goal, updated_at: now() } }))
        .matchedCount === 1,
    setPriority,
    recordStep: async (taskId, step) =>
      (
        await tasks.updateOne(
          { _id: taskId, 'steps.index': { $ne: step.index } },
          {
            $push: { steps: { ...step, recorded_at: now() } },
            $inc: { cost_usd: step.cost_usd },
            $set: { updated_at: now() },
          },
        )
      ).matchedCount === 1,
    appendContext: async (taskId, entry) =>
      (
        await tasks.updateOne(
          { _id: taskId, 'context.event_id': { $ne: entry.event_id } },
          { $push: { context: { ...entry, at: now() } }, $set: { updated_at: now() } },
        )
      ).matchedCount === 1,
    acknowledgeBackground: async (taskId) =>
      (
        await tasks.updateOne(
          { _id: taskId, background_acknowledged: { $ne: true } },
          { $set: { background_acknowledged: true, updated_at: now() } },
        )
      ).matchedCount === 1,
    setSpawnedSequence: async (taskId, sequence) => {
      await tasks.updateOne({ _id: taskId }, { $set: { spawned_sequence: sequence } });
    },
    listTasks: (filter, page) =>
      paginate(tasks, filter, {
        ...NEWEST_FIRST,
        limit: page.limit,
        after: page.cursor,
        budget: page.budget,
        ...(page.scope === undefined || store.kind === 'mongodb'
          ? {}
          : { scan: { filter: page.scope, limit: pageScanLimit } }),
      }),
    countByStatus,
    openApproval: (taskId) =>
      pauses.findOne(
        { task_id: taskId, kind: 'approval', resolved_at: { $exists: false } },
        { sort: { requested_at: 1 } },
      ),
    listOpenPauses: (filter, page) =>
      paginate(pauses, { $and: [filter, { resolved_at: { $exists: false } }] } as Filter<PauseRecord>, {
        sortField: 'requested_at',
        direction: 'asc',
        limit: page.limit,
        after: page.cursor,
        budget: page.budget,
      }),
    eraseSession: async (triple) =>
      (await tasks.deleteMany({ tenant: triple.tenant, user: triple.user, session: triple.session })).deletedCount,
    withdrawTask: async (taskId) => {
      await tasks.deleteOne({ _id: taskId, status: 'pending' });
    },
    listQueuedBefore: async (before, limit) => {
      // Served by the sparse `queued_at` index: it holds the queued tasks alone.
      const queued = await tasks.find({ queued_at: { $lt: before } }, { limit: limit * 2 });
      return queued
        .filter((task) => task.status === 'pending')
        .sort((a, b) => (a.queued_at ?? '').localeCompare(b.queued_at ?? ''))
        .slice(0, limit);
    },
    markRequeued: async (taskId, requeues) => {
      const at = now();
      const seen = requeues === 0 ? { $exists: false } : requeues;
      const result = await tasks.updateOne({ _id: taskId, status: 'pending', requeues: seen } as Filter<TaskRecord>, {
        $set: { queued_at: at, requeues: requeues + 1 },
      });
      return result.matchedCount === 1 ? requeues + 1 : null;
    },
  };
}
