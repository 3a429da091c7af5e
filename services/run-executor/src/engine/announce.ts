import type { Bus, EventPublisher } from '@ars/bus';
import { spawnedEventId, spawnedPayload } from '../domain/start.ts';
import type { TaskRecord } from '../domain/task.ts';
import type { TaskRepository } from '../store/task.repository.ts';
import { enqueueRun } from './work-queue.ts';

/**
 * Announcing a run: `task.spawned` on EVENTS, then the run on its RUNS
 * priority bucket, then the spawned sequence on the task. Both publishes
 * carry fixed ids (the event id; `Nats-Msg-Id` = the task id, or a requeue's
 * own id), so announcing one task twice stores each message once within the
 * streams' duplicate window: `task.spawned` is always on the stream before
 * the RUNS message exists, hence before the engine can emit `task.started`.
 */

/** What announcing needs. */
export interface AnnounceDeps {
  readonly bus: Bus;
  readonly publisher: EventPublisher;
  readonly tasks: TaskRepository;
}

/** Publishes `task.spawned`, and records its sequence on the task. */
export async function publishSpawned(deps: AnnounceDeps, task: TaskRecord): Promise<number> {
  const { sequence } = await deps.publisher.publish({
    type: 'task.spawned',
    identity: { tenant: task.tenant, user: task.user, session: task.session, run: task.task_id },
    eventId: spawnedEventId(task.task_id),
    occurredAt: task.created_at,
    payload: spawnedPayload(task),
  });
  return sequence;
}

/** A start's announcement: `task.spawned`, then the run queued under the task id as its message id. */
export async function announceRun(deps: AnnounceDeps, task: TaskRecord): Promise<void> {
  const sequence = await publishSpawned(deps, task);
  await Promise.all([
    enqueueRun(deps.bus, task, { msgId: task.task_id }),
    deps.tasks.setSpawnedSequence(task.task_id, sequence),
  ]);
}

/**
 * At a flow's first claim: the sequence of its `task.spawned`, published now
 * (deduplicated by its event id) when the task records none, which is when
 * the start's publish failed or has not been recorded yet. Either way the
 * event is on the stream before the claim emits `task.started`.
 */
export async function ensureSpawned(deps: AnnounceDeps, task: TaskRecord): Promise<void> {
  if (task.spawned_sequence !== undefined) return;
  const sequence = await publishSpawned(deps, task);
  task.spawned_sequence = sequence;
  await deps.tasks.setSpawnedSequence(task.task_id, sequence);
}
