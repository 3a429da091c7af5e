import { isServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import type { StartDependencies } from './dependencies.ts';
import type { SessionOwner } from '../domain/session-key.ts';

/** The turn an admission announces to the session service. */
export interface AdmittedTurn {
  readonly task_id: string;
  readonly query: string;
}

/**
 * Session admissions of starts, sent without waiting. `_session.admit`
 * opens a fresh session, reopens a closed one, touches an open one and
 * carries the turn's query, none of which the start's answer depends on:
 * what an admission would refuse, an erased session, is decided by the
 * run-executor's own erased-session marker, which the start reads after
 * inserting its task. The marker is written by the erasure cascade before
 * `sessions.delete` can succeed and is never deleted, so a session erased
 * by a completed `sessions.delete` is always refused, and a start racing an
 * erasure still in progress is either refused or inserted before the
 * cascade's delete, which then removes it. A session the admission never
 * reached (the session service away) is opened from the event stream when
 * its `task.spawned` arrives.
 *
 * A background refusal `session_erased` (an erasure in progress whose
 * cascade has not reached this service yet) records the marker at once, so
 * later starts of that session are refused without waiting for the cascade.
 */
export interface SessionAdmissions {
  /** Sends the admission of the caller's session with the turn it opens. */
  admit(caller: VerifiedIdentity, turn: AdmittedTurn): void;
}

export interface SessionAdmissionsOptions {
  readonly logger: Logger;
  /** Records that the session service refused the session as erased. */
  readonly onErased: (triple: SessionOwner) => Promise<void>;
}

export function createSessionAdmissions(
  checks: StartDependencies,
  options: SessionAdmissionsOptions,
): SessionAdmissions {
  const { logger } = options;
  return {
    admit(caller, turn) {
      checks.admitSession(caller, turn).catch(async (error: unknown) => {
        if (isServiceError(error) && error.code === 'session_erased') {
          logger.info({ taskId: turn.task_id }, 'session admission refused: erased; later starts of it are refused');
          await options
            .onErased({ tenant: caller.tenant, user: caller.user, session: caller.session })
            .catch((markError: unknown) => logger.warn({ err: markError }, 'could not record the erased session'));
          return;
        }
        logger.warn(
          { err: error, taskId: turn.task_id },
          'background session admission failed; the session is opened from the event stream',
        );
      });
    },
  };
}
