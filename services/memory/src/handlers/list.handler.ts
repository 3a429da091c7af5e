import { canFanIn } from '@ars/auth';
import { ServiceError, MemoryListRequest } from '@ars/contracts';
import type { MemoryListResponse, VerifiedIdentity } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { toItem } from '../domain/memory-record.ts';
import type { Owner } from '../domain/memory-record.ts';
import type { MemoryScope } from '../store/memory.repository.ts';
import type { MemoryDeps } from './deps.ts';
import { reject, targetFor } from './identity.ts';
import { typedMethod } from '@ars/service-kit';

/**
 * The scope of a memory.list: without `filter.tenant_ids`, the caller's own
 * memory; with them and admin or console:fleet, every item of those tenants;
 * naming only the caller's tenant without a claim is its own memory; naming
 * another tenant (or several) without a claim is 403 `scope_mismatch`.
 */
async function scopeOf(
  deps: MemoryDeps,
  verified: VerifiedIdentity,
  target: Owner,
  tenantIds: readonly string[] | undefined,
  operation: string,
): Promise<MemoryScope> {
  const named = tenantIds === undefined ? [] : [...new Set(tenantIds)];
  const fleet = canFanIn(verified.scopes, 'admin_or_fleet');
  if (named.length > 0 && fleet) return { kind: 'tenants', tenantIds: named };
  if (named.some((tenant) => tenant !== verified.tenant)) {
    const error = new ServiceError(
      'scope_mismatch',
      "filter.tenant_ids beyond the caller's own needs admin or console:fleet",
    );
    throw await reject(deps, verified, operation, error);
  }
  return { kind: 'own', owner: target };
}

/** memory.list: items in scope by key, a page at a time; `filter.tier` and `filter.prefix` narrow. */
export function createListHandler(deps: MemoryDeps): RpcHandler {
  return typedMethod(
    MemoryListRequest,
    async ({ method, identity: verified, body: request }): Promise<MemoryListResponse> => {
      const target = await targetFor(deps, method, verified, request.identity);
      const scope = await scopeOf(deps, verified, target, request.filter?.tenant_ids, method);
      const page = await deps.items.list(scope, {
        tier: request.filter?.tier,
        prefix: request.filter?.prefix,
        limit: request.limit,
        cursor: request.cursor,
      });
      return {
        items: page.items.map(toItem),
        ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
      };
    },
  );
}
