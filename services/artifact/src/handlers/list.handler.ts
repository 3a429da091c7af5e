import { foldIsolationFilter } from '@ars/auth';
import { PROTOCOL_VERSION, ArtifactsListRequest } from '@ars/contracts';
import type { ArtifactsListResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { toMetadata } from '../domain/artifact.ts';
import type { ArtifactDeps } from './deps.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';

/**
 * artifacts.list, folding rules exactly: the body identity's `user` is an
 * isolation principal (absent: the caller's own user, or with admin or
 * console:fleet every user of the tenant; naming another needs the claim,
 * else 403 `identity_scope_required`); its `tenant` crosses with the same
 * claim (else 403 `scope_mismatch`); `filter.session` only narrows. Newest first.
 */
export function createListHandler(deps: ArtifactDeps): RpcHandler {
  return typedMethod(
    ArtifactsListRequest,
    async ({ identity: verified, body: request }): Promise<ArtifactsListResponse> => {
      const target = reconcileIdentity('artifacts.list', verified, request.identity);
      const scope = foldIsolationFilter({
        verified,
        tenant: target.tenant,
        // The body's own user, not the backfilled one: its absence is what fans out.
        user: request.identity.user,
        session: request.filter?.session,
      });
      const filter = request.filter;
      const page = await deps.artifacts.list({
        tenant: scope.tenant,
        user: scope.user,
        session: scope.session,
        namespace: filter?.namespace,
        source: filter?.source,
        mime_type: filter?.mime_type,
        since: filter?.since,
        until: filter?.until,
        limit: request.limit,
        cursor: request.cursor,
      });
      return {
        items: page.items.map(toMetadata),
        ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
        protocol_version: PROTOCOL_VERSION,
      };
    },
  );
}
