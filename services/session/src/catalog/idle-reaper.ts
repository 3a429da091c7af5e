import type { Logger } from '@ars/telemetry';
import { IDLE_REASON, tripleOf } from '../domain/session.ts';
import type { SessionEvents } from '../session-events.ts';
import type { SessionRepository } from '../store/session.repository.ts';

/** Sessions closed per store query; a pass loops until none is left. */
const REAP_BATCH = 100;

/** Dependencies of {@link reapIdleSessions}. */
export interface ReaperDeps {
  readonly sessions: SessionRepository;
  readonly events: SessionEvents;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Seconds without activity after which an open session is closed. */
  readonly idleSeconds: number;
}

/**
 * One pass of the idle reaper: every open session not seen for
 * `idleSeconds` is closed (reason `idle`) with `session.gc_reaped` then
 * `session.closed`. The close is conditional on the session still being
 * open and idle, so a racing start wins and is not reaped. Returns how many
 * sessions were closed.
 */
export async function reapIdleSessions(deps: ReaperDeps): Promise<number> {
  const at = deps.now();
  const cutoff = new Date(at.getTime() - deps.idleSeconds * 1000).toISOString();
  let closed = 0;
  for (;;) {
    const idle = await deps.sessions.findIdle(cutoff, REAP_BATCH);
    let closedInBatch = 0;
    for (const session of idle) {
      if (!(await deps.sessions.closeIdle(session._id, cutoff, at.toISOString()))) continue;
      closedInBatch += 1;
      await deps.events.reaped(tripleOf(session), at, IDLE_REASON);
    }
    closed += closedInBatch;
    if (idle.length < REAP_BATCH || closedInBatch === 0) break;
  }
  if (closed > 0) deps.logger.info({ closed }, 'idle sessions closed');
  return closed;
}
