import { z } from 'zod';
import { ServiceError } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { describeFirstIssue } from '@ars/service-kit';
import type { Catalog } from '../catalog/admission.ts';
import type { TurnQueries } from '../catalog/turn-queries.ts';

/** The internal endpoint the run-executor calls before it accepts a start. */
export const ADMIT_ENDPOINT = '_session.admit';

/**
 * Body of `_session.admit`: the full triple of the start and, optionally, the
 * turn it opens (the new task's id and query), remembered for recording
 * that turn when its `task.spawned` arrives.
 */
export const AdmitRequest = z.strictObject({
  tenant: z.string().min(1),
  user: z.string().min(1),
  session: z.string().min(1),
  turn: z.strictObject({ task_id: z.string().min(1), query: z.string() }).optional(),
});
export type AdmitRequest = z.infer<typeof AdmitRequest>;

/** `_session.admit {tenant,user,session}` → `{state: 'opened' | 'reopened' | 'open'}`; `session_erased` for a tombstone. */
export function admitHandler(catalog: Catalog, turns: TurnQueries): RpcHandler {
  return async ({ body }) => {
    const parsed = AdmitRequest.safeParse(body);
    if (!parsed.success) {
      throw new ServiceError(
        'invalid_request',
        `invalid ${ADMIT_ENDPOINT} request: ${describeFirstIssue(parsed.error)}`,
      );
    }
    const { turn, ...triple } = parsed.data;
    const state = await catalog.admit(triple);
    if (turn !== undefined) turns.remember(turn.task_id, turn.query);
    return { state };
  };
}
