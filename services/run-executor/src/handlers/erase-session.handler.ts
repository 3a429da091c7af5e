import { z } from 'zod';
import { ServiceError } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { ApiDeps } from './deps.ts';

/** Name of the internal endpoint the session service calls on `sessions.delete`. */
export const ERASE_SESSION = '_tasks.erase_session';

const EraseSessionRequest = z.strictObject({
  tenant: z.string().min(1),
  user: z.string().min(1),
  session: z.string().min(1),
});

/**
 * Erases the run state of one state-record owner; the engine provides it
 * (checkpoints, pauses, controls of the session's runs) and returns how many
 * records it deleted.
 */
export type RunStateEraser = (triple: z.infer<typeof EraseSessionRequest>) => Promise<number>;

/**
 * `_tasks.erase_session` `{tenant, user, session}` → `{tasks_deleted,
 * state_records_deleted}`: part of the erasure cascade of `sessions.delete`.
 * Idempotent (a second call deletes nothing). The caller is the session
 * service acting for the verified owner, so the triple must be the caller's.
 */
export function createEraseSessionHandler(deps: ApiDeps, eraseRunState?: RunStateEraser): RpcHandler {
  return async ({ identity, body }) => {
    const parsed = EraseSessionRequest.safeParse(body);
    if (!parsed.success) throw new ServiceError('invalid_request', `invalid ${ERASE_SESSION} request`);
    const triple = parsed.data;
    if (triple.tenant !== identity.tenant || triple.user !== identity.user || triple.session !== identity.session) {
      throw new ServiceError('identity_required', `${ERASE_SESSION}: only the caller's own session can be erased`);
    }
    const stateRecordsDeleted = eraseRunState === undefined ? 0 : await eraseRunState(triple);
    const tasksDeleted = await deps.tasks.eraseSession(triple);
    return { tasks_deleted: tasksDeleted, state_records_deleted: stateRecordsDeleted };
  };
}
