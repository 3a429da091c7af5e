import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@ars/telemetry';
import type { TaskRecord } from '../domain/task.ts';

/**
 * Announcements of started runs (`task.spawned`, then the RUNS message,
 * then the spawned sequence on the task: `announceRun`), sent after the
 * start has answered. The answer waits only for what can refuse the start
 * and for the task's insert: the task is stored `pending` with its
 * `queued_at`, so a run whose announcement never lands (every retry failed,
 * or the process died first) is queued by the stale-run sweeper
 * (`stale-runs.ts`) of any executor, which publishes `task.spawned` again
 * when the stream lacks it. Announcing twice is harmless: both publishes
 * carry fixed message ids.
 *
 * A failed announcement is retried after each of `retryDelaysMs`, then left
 * to the sweeper with a warning. {@link RunAnnouncements.stop} waits for
 * those in flight and cuts the waits short: an announcement failing then is
 * left to the sweeper.
 */
export interface RunAnnouncements {
  /** Announces a task just inserted; returns at once. */
  announce(task: TaskRecord): void;
  /** Waits for the announcements in flight, without further retries. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Waits before the retries of a failed announcement, in ms: about 15 s in
 * all, longer than a stream leader's failover on a NATS cluster (7–8 s in
 * the chart's fault test), so that a run started meanwhile is not left to
 * the sweeper's minute.
 */
export const ANNOUNCE_RETRY_DELAYS_MS: readonly number[] = [50, 250, 1_000, 2_000, 4_000, 8_000];

export interface RunAnnouncementsOptions {
  readonly logger: Logger;
  /** Publishes the task's announcement (`announceRun` with the service's bus, publisher and tasks). */
  readonly send: (task: TaskRecord) => Promise<void>;
  /** @default {@link ANNOUNCE_RETRY_DELAYS_MS} */
  readonly retryDelaysMs?: readonly number[];
}

export function createRunAnnouncements(options: RunAnnouncementsOptions): RunAnnouncements {
  const { logger, send } = options;
  const delays = options.retryDelaysMs ?? ANNOUNCE_RETRY_DELAYS_MS;
  const inFlight = new Set<Promise<void>>();
  const stopping = new AbortController();

  async function announceWithRetries(task: TaskRecord): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await send(task);
        if (attempt > 0) logger.info({ taskId: task.task_id, attempts: attempt + 1 }, 'run announced after retries');
        return;
      } catch (error) {
        const delay = delays[attempt];
        if (delay === undefined || stopping.signal.aborted) {
          logger.warn(
            { err: error, taskId: task.task_id, attempts: attempt + 1 },
            'announcing a started run failed; the stale-run sweeper queues it',
          );
          return;
        }
        logger.debug(
          { err: error, taskId: task.task_id, attempt: attempt + 1 },
          'announcing a started run failed; retrying',
        );
        await sleep(delay, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
  }

  let stopped: Promise<void> | undefined;
  return {
    announce(task) {
      const pending = announceWithRetries(task).finally(() => inFlight.delete(pending));
      inFlight.add(pending);
    },
    stop() {
      stopping.abort();
      return (stopped ??= (async () => {
        while (inFlight.size > 0) await Promise.all([...inFlight]);
      })());
    },
  };
}
