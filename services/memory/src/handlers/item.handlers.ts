import { ServiceError, MemoryDeleteRequest, MemoryPutRequest, MemoryGetRequest } from '@ars/contracts';
import type { MemoryDeleteResponse, MemoryGetResponse, MemoryPutResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { refuseWriteIfErased, typedMethod } from '@ars/service-kit';
import { addressOf, toItem } from '../domain/memory-record.ts';
import type { MemoryDeps } from './deps.ts';
import { requireAdmin, targetFor } from './identity.ts';
import { encodeValue } from './value.ts';

/**
 * memory.put (admin): writes `key` on `tier` for the caller (tenant-wide, its
 * user, or its session); `if_version` makes it a compare-and-set (`conflict`).
 * Publishes `memory.item_put`. The session tier of a session whose erasure
 * reached memory is refused 410 `session_erased`: checked after the write
 * (see `ErasedSessionMarkers`), which is then taken back with the rest of the
 * session's tier.
 */
export function createPutHandler(deps: MemoryDeps): RpcHandler {
  return typedMethod(
    MemoryPutRequest,
    async ({ method, identity: verified, body: request }): Promise<MemoryPutResponse> => {
      const target = await targetFor(deps, method, verified, request.identity);
      await requireAdmin(deps, verified, method);
      const encoded = encodeValue(request.value, deps.limits.maxItemBytes);
      const record = await deps.items.put(addressOf(target, request.tier, request.key), {
        ...encoded,
        ifVersion: request.if_version,
        now: deps.now().toISOString(),
      });
      if (request.tier === 'session') {
        await refuseWriteIfErased(deps.erased, target, method, () => deps.items.deleteSession(target));
      }
      await deps.events.itemPut(target, method, request.key);
      return { item: toItem(record) };
    },
  );
}

/** memory.delete (admin): removes `key` from `tier`; publishes `memory.item_deleted` when something went. */
export function createDeleteHandler(deps: MemoryDeps): RpcHandler {
  return typedMethod(
    MemoryDeleteRequest,
    async ({ method, identity: verified, body: request }): Promise<MemoryDeleteResponse> => {
      const target = await targetFor(deps, method, verified, request.identity);
      await requireAdmin(deps, verified, method);
      const deleted = await deps.items.delete(addressOf(target, request.tier, request.key));
      if (deleted) await deps.events.itemDeleted(target, method, request.key);
      return { tier: request.tier, key: request.key, deleted };
    },
  );
}

/** memory.get: the caller's item (tenant tier, its user's, or its session's) by tier and key; else `not_found`. */
export function createGetHandler(deps: MemoryDeps): RpcHandler {
  return typedMethod(
    MemoryGetRequest,
    async ({ method, identity: verified, body: request }): Promise<MemoryGetResponse> => {
      const target = await targetFor(deps, method, verified, request.identity);
      const record = await deps.items.findOne(addressOf(target, request.tier, request.key));
      if (record === null) throw new ServiceError('not_found', `memory item ${request.tier}/${request.key} not found`);
      return { item: toItem(record) };
    },
  );
}
