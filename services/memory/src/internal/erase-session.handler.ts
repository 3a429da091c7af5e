import type { RpcHandler } from '@ars/bus';
import type { MemoryDeps } from '../handlers/deps.ts';
import { parseBody } from './parse.ts';
import { EraseSessionRequest } from './schemas.ts';

export const ERASE_SESSION_ENDPOINT = '_memory.erase_session';

/**
 * `_memory.erase_session {tenant, user, session}` → `{purged, items_deleted,
 * traces_deleted}`: the session tier of that session and the strategy traces
 * recorded in it. `purged` is true when anything was removed. Idempotent; no
 * `memory.item_deleted` (the erasure is reported once, by `session.erased`).
 */
export function createEraseSessionHandler(deps: MemoryDeps): RpcHandler {
  return async ({ body }) => {
    const owner = parseBody(ERASE_SESSION_ENDPOINT, EraseSessionRequest, body);
    const itemsDeleted = await deps.items.deleteSession(owner);
    const tracesDeleted = await deps.traces.deleteSession(owner);
    deps.logger.info({ itemsDeleted, tracesDeleted }, 'session memory erased');
    return { purged: itemsDeleted + tracesDeleted > 0, items_deleted: itemsDeleted, traces_deleted: tracesDeleted };
  };
}
