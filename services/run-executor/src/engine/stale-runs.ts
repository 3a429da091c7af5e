import { storedEventIdAt } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import { spawnedEventId } from '../domain/start.ts';
import type { TaskRecord } from '../domain/task.ts';
import { publishSpawned } from './announce.ts';
import type { AnnounceDeps } from './announce.ts';
import { enqueueRun } from './work-queue.ts';
import type { WorkQueue } from './work-queue.ts';

/**
 * Finds runs whose start was acknowledged but whose queue message the
 * streams lost, and queues them again.
 *
 * A start stores the task `pending` and answers; then it publishes
 * `task.spawned` and the RUNS message (`RunAnnouncements`, which retries
 * for about 15 seconds). An announcement can still be missing: every retry
 * failed, or the process died first; and on nats-server 2.9 a publish
 * acknowledged by a stream leader that a failover then replaces can be lost
 * with the leader's uncommitted log. Either way the task stays `pending`,
 * and its `task.spawned` may be missing too.
 *
 * A pending task is suspected lost when its run was queued more than
 * `staleAfterMs` ago while nothing on the queue waits for delivery (with a
 * backlog it may simply not have had its turn, so the sweeper waits for the
 * backlog to clear). A run delivered to an executor that died before it
 * marked the task running comes back within the ack wait, which
 * `staleAfterMs` exceeds; and a suspect is acted on only when a second pass,
 * `intervalMs` later, still finds it so. Then, once per task across every
 * executor (a conditional update on the task), `task.spawned` is published
 * again if the stream no longer holds it at its recorded sequence, and the
 * run is queued again under a fresh message id. A copy of a message that was
 * not lost after all costs one extra claim: the lease or the terminal status
 * turns it away.
 */

/** Options of {@link createStaleRunSweeper}. */
export interface StaleRunSweeperOptions {
  readonly deps: AnnounceDeps;
  readonly queue: Pick<WorkQueue, 'undelivered'>;
  readonly logger: Logger;
  /** How long a pending run may wait on an idle queue before it is suspected lost, in ms. */
  readonly staleAfterMs: number;
  /** Most suspects looked at per pass. @default 100 */
  readonly batch?: number;
  /** Clock (tests). @default Date.now */
  readonly now?: () => number;
  /** True for a run fleet control holds on the queue (its agent paused or stopped): not lost, never requeued. */
  readonly held?: (task: TaskRecord) => boolean;
}

export interface StaleRunSweeper {
  /** One pass; returns the runs queued again. */
  sweep(): Promise<number>;
}

/** The message id of a run's `n`th requeue: unique, so the stream's deduplication lets it through. */
export function requeueMessageId(taskId: string, n: number): string {
  return `${taskId}:requeue:${n}`;
}

export function createStaleRunSweeper(options: StaleRunSweeperOptions): StaleRunSweeper {
  const { deps, logger } = options;
  const batch = options.batch ?? 100;
  const now = options.now ?? Date.now;
  /** Suspects of the previous pass: task id → its `queued_at` then. */
  let suspects = new Map<string, string | undefined>();

  /** Republishes `task.spawned` when the stream no longer holds it where the task says; true when it did. */
  async function restoreSpawned(task: TaskRecord): Promise<boolean> {
    const at = task.spawned_sequence;
    if (at !== undefined && (await storedEventIdAt(deps.bus, at)) === spawnedEventId(task.task_id)) return false;
    const sequence = await publishSpawned(deps, task);
    await deps.tasks.setSpawnedSequence(task.task_id, sequence);
    return true;
  }

  async function requeue(task: TaskRecord): Promise<boolean> {
    const n = await deps.tasks.markRequeued(task.task_id, task.requeues ?? 0);
    // Another executor's sweeper, or a claim, came first.
    if (n === null) return false;
    const spawnedRepublished = await restoreSpawned(task);
    await enqueueRun(deps.bus, task, { msgId: requeueMessageId(task.task_id, n) });
    logger.warn(
      { taskId: task.task_id, queuedAt: task.queued_at, requeues: n, spawnedRepublished },
      'a pending run the queue lost was queued again',
    );
    return true;
  }

  return {
    async sweep(): Promise<number> {
      const before = new Date(now() - options.staleAfterMs).toISOString();
      const candidates = await deps.tasks.listQueuedBefore(before, batch);
      const previous = suspects;
      suspects = new Map();
      if (candidates.length === 0) return 0;
      // With a backlog, an old pending run may only be waiting its turn.
      if ((await options.queue.undelivered()) > 0) return 0;
      let requeued = 0;
      for (const task of candidates) {
        if (options.held?.(task) === true) continue;
        const confirmed = previous.has(task.task_id) && previous.get(task.task_id) === task.queued_at;
        if (!confirmed) {
          suspects.set(task.task_id, task.queued_at);
          continue;
        }
        try {
          if (await requeue(task)) requeued += 1;
        } catch (error) {
          // The next pass finds it again (its `queued_at` moved only if the requeue was recorded).
          logger.warn({ err: error, taskId: task.task_id }, 'queueing a lost run again failed');
        }
      }
      return requeued;
    },
  };
}
