import { foldSearchFilter } from '@ars/auth';
import { PROTOCOL_VERSION, SearchRequest } from '@ars/contracts';
import type { SearchHit, SearchResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { toMetadata } from '../domain/artifact.ts';
import type { ArtifactRecord } from '../domain/artifact.ts';
import type { ArtifactDeps } from './deps.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';

const SNIPPET_FIELDS = ['name', 'artifact_id', 'mime_type', 'namespace', 'source'] as const;

function snippet(record: ArtifactRecord, text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const needle = text.toLowerCase();
  return SNIPPET_FIELDS.map((field) => record[field]).find((value) => value?.toLowerCase().includes(needle));
}

function toHit(record: ArtifactRecord, text: string | undefined): SearchHit {
  const matched = snippet(record, text);
  return {
    kind: 'artifact',
    id: record.artifact_id,
    tenant: record.tenant,
    user: record.user,
    session: record.session,
    title: record.name ?? record.artifact_id,
    ...(matched === undefined ? {} : { snippet: matched }),
    occurred_at: record.created_at,
    record: toMetadata(record),
  };
}

/**
 * search.artifacts: free text over name, id, MIME type, namespace and source;
 * `filter.tenant_ids` / `user_ids` fold to the caller's own and need admin or
 * console:fleet beyond it (403 `scope_mismatch`), `session_ids` narrows (more
 * than one needs the claim). Newest first.
 */
export function createSearchHandler(deps: ArtifactDeps): RpcHandler {
  return typedMethod(SearchRequest, async ({ identity: verified, body: request }): Promise<SearchResponse> => {
    reconcileIdentity('search.artifacts', verified, request.identity);
    const filter = request.filter;
    const scope = foldSearchFilter({
      verified,
      ...(filter?.tenant_ids === undefined ? {} : { tenant_ids: filter.tenant_ids }),
      ...(filter?.user_ids === undefined ? {} : { user_ids: filter.user_ids }),
      ...(filter?.session_ids === undefined ? {} : { session_ids: filter.session_ids }),
    });
    const page = await deps.artifacts.search({
      tenant_ids: scope.tenant_ids,
      user_ids: scope.user_ids,
      session_ids: scope.session_ids,
      text: request.query,
      since: filter?.since,
      until: filter?.until,
      limit: request.limit,
      cursor: request.cursor,
    });
    return {
      items: page.items.map((record) => toHit(record, request.query)),
      ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
      protocol_version: PROTOCOL_VERSION,
    };
  });
}
