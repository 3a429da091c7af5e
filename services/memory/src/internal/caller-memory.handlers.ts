import { MEMORY_CALLER_READ, MEMORY_CALLER_WRITE } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { addressOf, toItem } from '../domain/memory-record.ts';
import type { MemoryDeps } from '../handlers/deps.ts';
import { encodeValue } from '../handlers/value.ts';
/** The `Operation` of `memory.item_put` for a write through the caller_memory tool. */
export const CALLER_WRITE_OPERATION = 'caller_memory.write';

/**
 * `_memory.caller_read {tenant, user, session, key}` → `{item}` (or `{item:
 * null}`): the run's built-in memory tool reading the caller_memory
 * namespaces, the caller's own (tenant, user) tier first, then the tenant tier.
 */
export function createCallerReadHandler(deps: MemoryDeps): InternalHandler {
  return serveInternal(MEMORY_CALLER_READ, async ({ body: request }) => {
    const own = await deps.items.findOne(addressOf(request, 'user', request.key));
    const record = own ?? (await deps.items.findOne(addressOf(request, 'tenant', request.key)));
    return { item: record === null ? null : toItem(record) };
  });
}

/**
 * `_memory.caller_write {tenant, user, session, key, value}` → `{item}`: the
 * run's built-in memory tool writing the caller's own (tenant, user) tier.
 * A run acts for its caller, so no admin claim is needed for its own tier;
 * the tenant tier stays admin-only (memory.put). Publishes `memory.item_put`.
 */
export function createCallerWriteHandler(deps: MemoryDeps): InternalHandler {
  return serveInternal(MEMORY_CALLER_WRITE, async ({ body: request }) => {
    const encoded = encodeValue(request.value, deps.limits.maxItemBytes);
    const record = await deps.items.put(addressOf(request, 'user', request.key), {
      ...encoded,
      now: deps.now().toISOString(),
    });
    await deps.events.itemPut(request, CALLER_WRITE_OPERATION, request.key);
    return { item: toItem(record) };
  });
}
