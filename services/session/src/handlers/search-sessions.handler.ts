import { PROTOCOL_VERSION, SearchRequest } from '@ars/contracts';
import type { SearchHit, SearchResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { foldSearchFilter } from '@ars/auth';
import type { Filter } from '@ars/store';
import { VISIBLE_STATES, toIsoUtc, toSessionView } from '../domain/session.ts';
import type { SessionDoc } from '../domain/session.ts';
import type { SessionRepository } from '../store/session.repository.ts';
import { literalPattern, nextCursor, readPage } from './paging.ts';
import { typedMethod } from '@ars/service-kit';

/** Most words of a free-text query that are matched (the rest are ignored). */
const MAX_TERMS = 16;

function textFilter(query: string): Filter<SessionDoc>[] {
  const terms = query
    .split(/\s+/)
    .filter((t) => t !== '')
    .slice(0, MAX_TERMS);
  return terms.map((term) => ({ title: { $regex: literalPattern(term), $options: 'i' } }));
}

function hitOf(doc: SessionDoc): SearchHit {
  return {
    kind: 'session',
    id: doc.session_id,
    tenant: doc.tenant,
    user: doc.user,
    session: doc.session_id,
    ...(doc.title === undefined ? {} : { title: doc.title, snippet: doc.title }),
    occurred_at: doc.created_at,
    record: toSessionView(doc),
  };
}

/**
 * search.sessions: sessions in the folded scope (`foldSearchFilter`: own
 * tenant and user unless the claim allows more; `session_ids` narrows),
 * created within `since`/`until`, whose title contains every word of
 * `query` (case-insensitive); newest first.
 */
export function searchSessionsHandler(sessions: SessionRepository): RpcHandler {
  return typedMethod(SearchRequest, async ({ identity, body: request }) => {
    const named = request.filter;
    const folded = foldSearchFilter({
      verified: identity,
      tenant_ids: named?.tenant_ids,
      user_ids: named?.user_ids,
      session_ids: named?.session_ids,
    });
    const and: Filter<SessionDoc>[] = [
      { tenant: { $in: [...folded.tenant_ids] } },
      { user: { $in: [...folded.user_ids] } },
      { status: { $in: [...VISIBLE_STATES] } },
    ];
    if (folded.session_ids !== undefined) and.push({ session_id: { $in: [...folded.session_ids] } });
    if (named?.since !== undefined) and.push({ created_at: { $gte: toIsoUtc(named.since) } });
    if (named?.until !== undefined) and.push({ created_at: { $lt: toIsoUtc(named.until) } });
    if (request.query !== undefined) and.push(...textFilter(request.query));
    const page = await readPage('search.sessions', () =>
      sessions.page({ filter: { $and: and }, sortField: 'created_at', limit: request.limit, cursor: request.cursor }),
    );
    const response: SearchResponse = {
      items: page.items.map(hitOf),
      ...nextCursor(page),
      protocol_version: PROTOCOL_VERSION,
    };
    return response;
  });
}
