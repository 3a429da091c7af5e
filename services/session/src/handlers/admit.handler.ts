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

/**
 * How long a run-executor may reuse an admission (ms): the configured time,
 * kept under a quarter of the idle-close time, so that a session whose
 * admission is being reused was touched too recently to be reaped.
 */
export function admissionReuseMs(reuseSeconds: number, idleCloseSeconds: number): number {
  const capped = idleCloseSeconds > 0 ? Math.min(reuseSeconds, idleCloseSeconds / 4) : reuseSeconds;
  return Math.floor(capped * 1000);
}

/**
 * `_session.admit {tenant,user,session,turn?}` → `{state: 'opened' | 'reopened' | 'open', reuse_ms}`;
 * `session_erased` for a tombstone. `reuse_ms` (0: none) is how long the
 * caller may reuse the answer for later starts on the session.
 */
export function admitHandler(catalog: Catalog, turns: TurnQueries, reuseMs: number): RpcHandler {
  return async ({ body }) => {
    const parsed = AdmitRequest.safeParse(body);
    if (!parsed.success) {
      throw new ServiceError(
        'invalid_request',
        `invalid ${ADMIT_ENDPOINT} request: ${describeFirstIssue(parsed.error)}`,
      );
    }
    const { turn, ...triple } = parsed.data;
    // Before the admission's write: a caller reusing an earlier admission does not
    // wait for this one, and the turn's task.spawned may arrive meanwhile.
    if (turn !== undefined) turns.remember(turn.task_id, turn.query);
    const state = await catalog.admit(triple);
    return { state, reuse_ms: reuseMs };
  };
}
