import { SESSION_ADMIT } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import type { Catalog } from '../catalog/admission.ts';
import type { TurnQueries } from '../catalog/turn-queries.ts';

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
 * refused `session_erased` for a tombstone. `reuse_ms` (0: none) is how long
 * the caller may reuse the answer for later starts on the session. The turn
 * (the new task's id and query) is remembered for recording that turn when
 * its `task.spawned` arrives.
 */
export function admitHandler(catalog: Catalog, turns: TurnQueries, reuseMs: number): InternalHandler {
  return serveInternal(SESSION_ADMIT, async ({ body }) => {
    const { turn, ...triple } = body;
    // Before the admission's write: a caller reusing an earlier admission does not
    // wait for this one, and the turn's task.spawned may arrive meanwhile.
    if (turn !== undefined) turns.remember(turn.task_id, turn.query);
    const state = await catalog.admit(triple);
    return { state, reuse_ms: reuseMs };
  });
}
