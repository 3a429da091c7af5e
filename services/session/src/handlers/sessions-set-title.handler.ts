import { PROTOCOL_VERSION, ServiceError, SessionsSetTitleRequest } from '@ars/contracts';
import type { SessionsSetTitleResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { requireOwnIdentity, typedMethod } from '@ars/service-kit';
import { toSessionView } from '../domain/session.ts';
import type { SessionTriple } from '../domain/session.ts';
import type { SessionEvents } from '../session-events.ts';
import type { SessionRepository } from '../store/session.repository.ts';

/**
 * sessions.set_title: the body identity must be the verified one (else 401
 * `identity_required`); the target is `session_id` — a sibling session of
 * the same (tenant, user) — or the verified session. Manual provenance,
 * `session.title_changed` Source `manual`. Unknown or erased: `not_found`.
 */
export function sessionsSetTitleHandler(sessions: SessionRepository, events: SessionEvents): RpcHandler {
  return typedMethod(SessionsSetTitleRequest, async ({ identity, body: request }) => {
    requireOwnIdentity('sessions.set_title', identity, request.identity);
    const target: SessionTriple = {
      tenant: identity.tenant,
      user: identity.user,
      session: request.session_id ?? identity.session,
    };
    const doc = await sessions.setManualTitle(target, request.title);
    if (doc === null) throw new ServiceError('not_found', 'sessions.set_title: not found');
    await events.titleChanged(target, 'manual');
    const response: SessionsSetTitleResponse = { session: toSessionView(doc), protocol_version: PROTOCOL_VERSION };
    return response;
  });
}
