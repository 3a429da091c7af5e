import { PROTOCOL_VERSION, ServiceError, SessionsInspectRequest } from '@ars/contracts';
import type { SessionsInspectResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { isTombstone, toSessionView } from '../domain/session.ts';
import type { SessionTriple } from '../domain/session.ts';
import type { ProjectionRepository } from '../store/projection.repository.ts';
import type { SessionRepository } from '../store/session.repository.ts';
import { typedMethod } from '@ars/service-kit';

/**
 * sessions.inspect: one session of the caller's (tenant, user) —
 * `session_id`, default the verified session — with its task counters and
 * artifact count. Another owner's, an unknown or an erased id: `not_found`.
 */
export function sessionsInspectHandler(sessions: SessionRepository, projections: ProjectionRepository): RpcHandler {
  return typedMethod(SessionsInspectRequest, async ({ identity, body: request }) => {
    const target: SessionTriple = {
      tenant: identity.tenant,
      user: identity.user,
      session: request.session_id ?? identity.session,
    };
    const doc = await sessions.find(target);
    if (doc === null || isTombstone(doc.status)) throw new ServiceError('not_found', 'sessions.inspect: not found');
    const [taskCounts, artifactCount] = await Promise.all([
      projections.taskCounts(target),
      projections.artifactCount(target),
    ]);
    const response: SessionsInspectResponse = {
      session: toSessionView(doc),
      task_counts: taskCounts,
      artifact_count: artifactCount,
      ...(doc.last_task_id === undefined ? {} : { last_task_id: doc.last_task_id }),
      protocol_version: PROTOCOL_VERSION,
    };
    return response;
  });
}
