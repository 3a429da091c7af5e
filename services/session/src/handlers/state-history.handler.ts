import { ServiceError, StateHistoryRequest } from '@ars/contracts';
import type { StateHistoryResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { isAdmin } from '@ars/auth';
import { sameTriple, verifiedTriple } from '../domain/scope.ts';
import { isTombstone, toIsoUtc } from '../domain/session.ts';
import type { SessionTriple } from '../domain/session.ts';
import { toStateRecordView } from '../domain/state-records.ts';
import type { SessionRepository } from '../store/session.repository.ts';
import type { StateRecordRepository } from '../store/state-record.repository.ts';
import { nextCursor, readPage } from './paging.ts';
import { typedMethod } from '@ars/service-kit';

/**
 * state.history: the state records of the session the body identity names
 * (backfilled from the verified one), oldest first. Another identity's
 * session needs admin; without it, and for a session that does not exist
 * (or was erased), the answer is the same 404 `not_found`.
 */
export function stateHistoryHandler(sessions: SessionRepository, records: StateRecordRepository): RpcHandler {
  return typedMethod(StateHistoryRequest, async ({ identity, body: request }) => {
    const named = request.identity;
    const target: SessionTriple = {
      tenant: named.tenant ?? identity.tenant,
      user: named.user ?? identity.user,
      session: named.session ?? identity.session,
    };
    const notFound = new ServiceError('not_found', 'state.history: not found');
    if (!sameTriple(target, verifiedTriple(identity)) && !isAdmin(identity.scopes)) throw notFound;
    const doc = await sessions.find(target);
    if (doc === null || isTombstone(doc.status)) throw notFound;

    const filter = request.filter;
    const page = await readPage('state.history', () =>
      records.page({
        triple: target,
        taskId: filter?.run,
        kinds: filter?.kinds,
        since: filter?.since === undefined ? undefined : toIsoUtc(filter.since),
        until: filter?.until === undefined ? undefined : toIsoUtc(filter.until),
        limit: request.limit,
        cursor: request.cursor,
      }),
    );
    const response: StateHistoryResponse = {
      session_id: target.session,
      items: page.items.map(toStateRecordView),
      ...nextCursor(page),
    };
    return response;
  });
}
