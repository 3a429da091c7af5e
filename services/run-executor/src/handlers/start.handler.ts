import { PROTOCOL_VERSION, ServiceError, StartRequest } from '@ars/contracts';
import type { StartResponse, VerifiedIdentity } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { idempotencyScope, newTaskRecord } from '../domain/start.ts';
import type { BoundAgent, ResolvedArtifact } from '../domain/start.ts';
import { newTaskId } from '../domain/task-id.ts';
import type { TaskRecord } from '../domain/task.ts';
import { announceRun } from '../engine/announce.ts';
import type { ApiDeps } from './deps.ts';
import type { StartDependencies } from './dependencies.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';
import type { RunAnnouncements } from './run-announcements.ts';
import type { SessionAdmissions } from './session-admissions.ts';
import type { ErasedSessionRepository } from '../store/erased-session.repository.ts';
import type { FleetGate } from '../engine/fleet-gate.ts';

/** The checks other services answer, all at once (none depends on another). */
async function runChecks(
  checks: StartDependencies,
  caller: VerifiedIdentity,
  request: StartRequest,
  defaultAgentId: string,
): Promise<{ agent: BoundAgent; artifacts: ResolvedArtifact[] }> {
  const agentId = request.agent_id;
  const ids = [...new Set(request.input_artifact_ids ?? [])];
  const resolvesAgent = agentId !== undefined && agentId !== defaultAgentId;
  if (!resolvesAgent && ids.length === 0) {
    return { agent: agentId === undefined ? {} : { agent_id: agentId }, artifacts: [] };
  }
  const [agent, artifacts] = await Promise.all([
    resolvesAgent
      ? checks.resolveAgent(caller, agentId).then((r): BoundAgent => ({ agent_id: agentId, ...r }))
      : Promise.resolve<BoundAgent>(agentId === undefined ? {} : { agent_id: agentId }),
    ids.length === 0 ? Promise.resolve([]) : checks.resolveArtifacts(caller, ids),
  ]);
  return { agent, artifacts };
}

function erasedError(): ServiceError {
  return new ServiceError('session_erased', 'this session was erased; start a fresh session id');
}

function response(taskId: string, reused: boolean): StartResponse {
  return { task_id: taskId, reused, protocol_version: PROTOCOL_VERSION };
}

/**
 * `start`: the spec's five rules.
 *
 * 1. An `idempotency_key` already used in the same (tenant, user, session)
 *    returns that task with `reused: true`. Race-free: the task carries
 *    `idempotency_scope` under a sparse unique index, so of concurrent starts
 *    exactly one insert wins and the others read the winner.
 * 2–3. A named `agent_id` other than the configured default must resolve in
 *    the caller's tenant (`_agent.resolve`), else `invalid_request`, the same
 *    for another tenant's id and an unknown one, before any task exists.
 *    `Task.agent_id` is absent when the caller named none.
 * 4. `agent_id` only selects configuration; nothing else of the run uses it.
 * 5. `_session.admit` opens a fresh session, reopens a closed one, and
 *    touches an open one; it is sent without waiting (see
 *    `SessionAdmissions`), once nothing can refuse the start any more, so a
 *    refused start neither opens nor touches its session. An erased session
 *    (`session_erased`) is refused by the erased-session marker, read after
 *    the insert: a session erased before or meanwhile withdraws the new task
 *    and refuses the start.
 *
 * The path is kept short: the idempotency lookup and the checks run
 * concurrently; then one insert and the marker read, and the answer. The
 * admission, then `task.spawned` and the RUNS enqueue (`announce.ts`; the
 * engine emits `task.started` when it claims the run) follow the answer
 * (`RunAnnouncements`): the task is stored pending and queued, and a run
 * whose announcement never lands is queued by the stale-run sweeper.
 * Identity: the verified triple, never the body.
 */
export function createStartHandler(
  deps: ApiDeps,
  checks: StartDependencies,
  admissions: SessionAdmissions,
  announcements: RunAnnouncements,
  erasedSessions: ErasedSessionRepository,
  fleet?: Pick<FleetGate, 'admitStart'>,
): RpcHandler {
  return typedMethod(StartRequest, async ({ method, identity, body: request }): Promise<StartResponse> => {
    reconcileIdentity(method, identity, request.identity);
    const key = request.idempotency_key;
    const scope = key === undefined ? undefined : idempotencyScope(identity, key);

    // Fleet control (a draining, stopped or deregistered agent takes no new run: 409 conflict), before the
    // session is admitted; a repeat of a start made before the refusal still gets its task.
    const refused = await fleet?.admitStart(identity.tenant, request.agent_id).then(
      () => undefined,
      (error: unknown) => error,
    );
    if (refused !== undefined) {
      const before = scope === undefined ? null : await deps.tasks.findByIdempotencyScope(scope);
      if (before !== null) return reuse(deps, before);
      throw refused;
    }

    const taskId = newTaskId();
    const pendingChecks = runChecks(checks, identity, request, deps.settings.defaultAgentId);
    // Observed now so that a refusal arriving while the lookup runs is never an unhandled rejection.
    pendingChecks.catch(() => undefined);
    const existing = scope === undefined ? null : await deps.tasks.findByIdempotencyScope(scope);
    if (existing !== null) {
      admissions.admit(identity, { task_id: existing.task_id, query: existing.query });
      return reuse(deps, existing);
    }
    const { agent, artifacts } = await pendingChecks;

    const record = newTaskRecord({
      taskId,
      triple: identity,
      request,
      agent,
      artifacts,
      now: new Date().toISOString(),
    });
    const { task, reused } = await deps.tasks.insertTask(record);
    // After the insert: either this sees the erasure's marker, or the erasure's delete (after its marker) removes the task.
    if (await erasedSessions.isErased(identity)) {
      if (!reused) await deps.tasks.withdrawTask(task.task_id);
      throw erasedError();
    }
    // Nothing refuses the start any more: the admission opens or touches the session. It leaves
    // before `task.spawned` on the same connection, so the session learns the turn's query before
    // it records the turn.
    admissions.admit(identity, { task_id: task.task_id, query: task.query });
    if (reused) return reuse(deps, task);
    // The task is stored and counts as queued: its announcement need not delay the answer.
    announcements.announce(task);
    deps.logger.debug({ taskId, reused: false }, 'run spawned');
    return response(taskId, false);
  });
}

/**
 * A reused start. A task still `pending` without a recorded spawn sequence
 * may belong to a start that failed (or is still running) between its
 * insert and its enqueue: announcing again is safe (both publishes are
 * deduplicated) and makes a crashed start recoverable by retrying it.
 */
async function reuse(deps: ApiDeps, task: TaskRecord): Promise<StartResponse> {
  if (task.status === 'pending' && task.spawned_sequence === undefined) await announceRun(deps, task);
  return response(task.task_id, true);
}
