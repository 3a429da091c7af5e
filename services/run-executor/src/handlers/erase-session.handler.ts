import { setTimeout as sleep } from 'node:timers/promises';
import { isServiceError, refuse, ServiceError, TASKS_ERASE_SESSION } from '@ars/contracts';
import type { OwnerTriple, VerifiedIdentity } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { isTerminal } from '../domain/task.ts';
import { deliver } from './controls.handler.ts';
import type { ApiDeps } from './deps.ts';
import type { ErasedSessionRepository } from '../store/erased-session.repository.ts';

/** How long an erasure waits for the session's live runs to stop before it is retried later. */
const STOP_RUNS_TIMEOUT_MS = 15_000;
const STOP_RUNS_POLL_MS = 50;
const LIVE_STATUSES = ['pending', 'running', 'paused'] as const;

const ENDPOINT = TASKS_ERASE_SESSION;

/**
 * Erases the run state of one state-record owner; the engine provides it
 * (checkpoints, pauses, controls of the session's runs) and returns how many
 * records it deleted.
 */
export type RunStateEraser = (triple: OwnerTriple) => Promise<number>;

/**
 * `_tasks.erase_session` `{tenant, user, session}` → `{tasks_deleted,
 * state_records_deleted}`: part of the erasure cascade of `sessions.delete`.
 * Idempotent (a second call deletes nothing). The caller is the session
 * service acting for the verified owner, so the triple must be the caller's.
 */
export function createEraseSessionHandler(
  deps: ApiDeps,
  erasure: { readonly markers: ErasedSessionRepository },
  eraseRunState?: RunStateEraser,
): InternalHandler {
  return serveInternal(ENDPOINT, async ({ identity, body: triple }) => {
    if (triple.tenant !== identity.tenant || triple.user !== identity.user || triple.session !== identity.session) {
      throw new ServiceError('identity_required', `${ENDPOINT.name}: only the caller's own session can be erased`);
    }
    // First, so that a start of this session either sees the marker (it reads
    // it after its insert) or inserted its task before the delete below.
    await erasure.markers.mark(triple, new Date().toISOString());
    await stopLiveRuns(deps, identity, triple);
    const stateRecordsDeleted = eraseRunState === undefined ? 0 : await eraseRunState(triple);
    const tasksDeleted = await deps.tasks.eraseSession(triple);
    return { tasks_deleted: tasksDeleted, state_records_deleted: stateRecordsDeleted };
  });
}

/**
 * Stops every run of the session that has not ended, before anything is
 * deleted: a live run would otherwise keep publishing events after the
 * stream is purged, and could never write its terminal status. Running runs
 * get a hard cancel through their inbox; runs no executor has claimed are
 * ended in the store (the engine drops a claimed task that is terminal).
 * Waits until each is terminal; a run that does not stop in time makes the
 * erasure `unavailable`, and the session service retries it.
 */
async function stopLiveRuns(
  deps: ApiDeps,
  caller: VerifiedIdentity,
  triple: { tenant: string; user: string; session: string },
): Promise<void> {
  const live = await deps.tasks.listTasks({ ...triple, status: { $in: [...LIVE_STATUSES] } }, { limit: 500 });
  for (const task of live.items) {
    try {
      await deliver(deps, task.task_id, {
        method: 'cancel',
        payload: { hard: true },
        event_id: `erase:${task.task_id}`,
        caller,
        caller_tier: 'owner_user',
      });
    } catch (error) {
      if (!isServiceError(error) || error.code !== 'not_found') throw error;
      // No live inbox: not claimed yet (or just ended). End it where it stands.
      await deps.tasks.markTerminal(task.task_id, 'cancelled');
    }
  }
  const deadline = Date.now() + STOP_RUNS_TIMEOUT_MS;
  for (const task of live.items) {
    for (;;) {
      const current = await deps.tasks.getTask(task.task_id);
      if (current === null || isTerminal(current.status)) break;
      if (Date.now() > deadline) {
        throw refuse(
          ENDPOINT,
          'runs_still_stopping',
          `run ${task.task_id} did not stop in time; the erasure will be retried`,
        );
      }
      await sleep(STOP_RUNS_POLL_MS);
    }
  }
}
