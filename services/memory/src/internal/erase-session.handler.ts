import { MEMORY_ERASE_SESSION } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import type { MemoryDeps } from '../handlers/deps.ts';

/**
 * `_memory.erase_session {tenant, user, session}` → `{purged, items_deleted,
 * traces_deleted}`: the session tier of that session and the strategy traces
 * recorded in it, after marking the session erased (its session tier takes no
 * write again). `purged` is true when anything was removed. Idempotent; no
 * `memory.item_deleted` (the erasure is reported once, by `session.erased`).
 */
export function createEraseSessionHandler(deps: MemoryDeps): InternalHandler {
  return serveInternal(MEMORY_ERASE_SESSION, async ({ body: owner }) => {
    // First: a session-tier put that lands after the delete below sees the marker and takes itself back.
    await deps.erased.mark(owner, deps.now().toISOString());
    const itemsDeleted = await deps.items.deleteSession(owner);
    const tracesDeleted = await deps.traces.deleteSession(owner);
    deps.logger.info({ itemsDeleted, tracesDeleted }, 'session memory erased');
    return { purged: itemsDeleted + tracesDeleted > 0, items_deleted: itemsDeleted, traces_deleted: tracesDeleted };
  });
}
