import { PROTOCOL_VERSION, SessionsListRequest } from '@ars/contracts';
import type { SessionsListResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { Filter } from '@ars/store';
import { resolveListScope } from '../domain/scope.ts';
import { VISIBLE_STATES, toSessionView } from '../domain/session.ts';
import type { SessionDoc } from '../domain/session.ts';
import type { SessionRepository } from '../store/session.repository.ts';
import { literalPattern, nextCursor, readPage } from './paging.ts';
import { typedMethod } from '@ars/service-kit';

/**
 * sessions.list: open and closed sessions of the caller's (tenant, user),
 * most recently seen first; `filter.tenant_ids` fans in across those
 * tenants' users under admin or console:fleet (else 403 `scope_mismatch`);
 * `filter.status` narrows; `filter.text` matches the title (case-insensitive).
 */
export function sessionsListHandler(sessions: SessionRepository): RpcHandler {
  return typedMethod(SessionsListRequest, async ({ identity, body: request }) => {
    const scope = resolveListScope(identity, request.filter?.tenant_ids);
    const filter: Filter<SessionDoc> = {
      tenant: { $in: [...scope.tenants] },
      status: { $in: [...(request.filter?.status ?? VISIBLE_STATES)] },
    };
    if (scope.user !== undefined) filter.user = scope.user;
    if (request.filter?.text !== undefined) {
      filter.title = { $regex: literalPattern(request.filter.text), $options: 'i' };
    }
    const page = await readPage('sessions.list', () =>
      sessions.page({ filter, sortField: 'last_seen_at', limit: request.limit, cursor: request.cursor }),
    );
    const response: SessionsListResponse = {
      items: page.items.map(toSessionView),
      ...nextCursor(page),
      protocol_version: PROTOCOL_VERSION,
    };
    return response;
  });
}
