import { isServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import type { StartDependencies } from './dependencies.ts';
import { sessionKey } from '../domain/session-key.ts';
import type { SessionOwner } from '../domain/session-key.ts';

/** At most this many sessions' admissions are kept; the least recently granted go first. */
const DEFAULT_CAPACITY = 10_000;

/** How a start's session was admitted. */
export type Admission = 'asked' | 'reused';

/** The turn an admission announces to the session service. */
export interface AdmittedTurn {
  readonly task_id: string;
  readonly query: string;
}

/**
 * Session admissions a start may reuse instead of waiting for the session
 * service again. `_session.admit` answers how long its answer holds
 * (`reuse_ms`, which the session service keeps well inside its idle-close
 * time); within that window a start on the same (tenant, user, session)
 * still sends the admission (it touches the session, reopens one the
 * reaper closed, carries the turn's query) but does not wait for it. What
 * a waited-for admission would refuse, an erasure, is caught by the
 * run-executor's own erased-session marker, which the start reads after
 * inserting its task. A refused or failed background admission drops the
 * session from the cache, so the next start asks again.
 */
export interface SessionAdmissions {
  /** Admits the caller's session: waits for the session service only when no admission is held. */
  admit(caller: VerifiedIdentity, turn: AdmittedTurn): Promise<Admission>;
  /** Drops the session's held admission (its erasure reached this replica). */
  forget(triple: SessionOwner): void;
  /** Sessions with a held admission (expired ones included until pruned). */
  readonly size: number;
}

export interface SessionAdmissionsOptions {
  readonly logger: Logger;
  /** @default 10000 */
  readonly capacity?: number;
  /** Monotonic clock, in ms. @default performance.now */
  readonly now?: () => number;
}

export function createSessionAdmissions(
  checks: StartDependencies,
  options: SessionAdmissionsOptions,
): SessionAdmissions {
  const capacity = options.capacity ?? DEFAULT_CAPACITY;
  const now = options.now ?? (() => performance.now());
  const { logger } = options;
  /** Key → the monotonic time until which the admission holds; insertion order is grant order. */
  const heldUntil = new Map<string, number>();

  /** An answer given to a question sent at `askedAt` holds from then, not from its arrival. */
  const grant = (key: string, askedAt: number, reuseMs: number | undefined): void => {
    heldUntil.delete(key);
    if (reuseMs === undefined || reuseMs <= 0) return;
    heldUntil.set(key, askedAt + reuseMs);
    while (heldUntil.size > capacity) {
      const oldest = heldUntil.keys().next();
      if (oldest.done === true) break;
      heldUntil.delete(oldest.value);
    }
  };

  const ask = async (key: string, caller: VerifiedIdentity, turn: AdmittedTurn): Promise<void> => {
    const askedAt = now();
    const { reuseMs } = await checks.admitSession(caller, turn);
    grant(key, askedAt, reuseMs);
  };

  return {
    async admit(caller, turn) {
      const key = sessionKey(caller);
      const until = heldUntil.get(key);
      if (until === undefined || until <= now()) {
        if (until !== undefined) heldUntil.delete(key);
        await ask(key, caller, turn);
        return 'asked';
      }
      ask(key, caller, turn).catch((error: unknown) => {
        heldUntil.delete(key);
        const refused = isServiceError(error) && error.status < 500;
        if (refused) logger.info({ code: error.code }, 'reused session admission refused; the next start asks again');
        else logger.warn({ err: error }, 'background session admission failed; the next start asks again');
      });
      return 'reused';
    },
    forget(triple) {
      heldUntil.delete(sessionKey(triple));
    },
    get size() {
      return heldUntil.size;
    },
  };
}
