import { refuse, ServiceError, SESSION_ADMIT } from '@ars/contracts';
import type { SessionDoc, SessionTriple } from '../domain/session.ts';
import { isTombstone } from '../domain/session.ts';
import type { SessionEvents } from '../session-events.ts';
import type { SessionRepository } from '../store/session.repository.ts';

/** What an admitted start found: a new session, a reopened one, or an open one (a normal turn). */
export type AdmitState = 'opened' | 'reopened' | 'open';

/** Dependencies of the catalog's lifecycle operations. */
export interface CatalogDeps {
  readonly sessions: SessionRepository;
  readonly events: SessionEvents;
  readonly now: () => Date;
}

/** Admission and first-use of sessions. */
export interface Catalog {
  /**
   * A start on `triple`: creates it open on first use (`session.opened`),
   * reopens a closed one (`session.reopened`), touches an open one
   * (`session.touched`); an erased id is refused `session_erased`.
   */
  admit(triple: SessionTriple): Promise<AdmitState>;
  /**
   * The entry of a session seen on the event stream, created open on first
   * sight (`session.opened`) without touching an existing one; `undefined`
   * for a tombstoned id.
   */
  ensure(triple: SessionTriple): Promise<SessionDoc | undefined>;
}

/** Attempts before giving up on a session that keeps changing under a racing writer. */
const MAX_ATTEMPTS = 5;

/** `_session.admit`'s declared refusal of an erased session (410 `session_erased`). */
function erasedError(): ServiceError {
  return refuse(SESSION_ADMIT, 'session_erased', 'this session was erased; start a fresh session id');
}

/** Creates the catalog's lifecycle operations. */
export function createCatalog({ sessions, events, now }: CatalogDeps): Catalog {
  /**
   * A normal turn, the common case, in one conditional write: it matches only
   * an `open` entry, so a tombstone (or a closed session) falls through to
   * the full path, which reads the entry and decides. The store stays the
   * only authority: nothing about a session is remembered between calls.
   */
  async function touchIfOpen(triple: SessionTriple): Promise<AdmitState | undefined> {
    const at = now();
    if (!(await sessions.touchOpen(triple, at.toISOString()))) return undefined;
    // A normal turn sits on the start's critical path: the touch is recorded;
    // its event (best effort, failures logged) need not hold the start back.
    void events.touched(triple, at);
    return 'open';
  }

  async function admitOnce(triple: SessionTriple): Promise<AdmitState | undefined> {
    const at = now();
    const iso = at.toISOString();
    const existing = await sessions.find(triple);
    if (existing === null) {
      if ((await sessions.insertOpen(triple, iso)) === null) return undefined;
      await events.opened(triple, at);
      return 'opened';
    }
    if (isTombstone(existing.status)) throw erasedError();
    if (existing.status === 'open') return touchIfOpen(triple);
    const before = await sessions.reopen(triple, iso);
    if (before === null) return undefined;
    await events.reopened(triple, at, before.closed_reason ?? '');
    return 'reopened';
  }

  return {
    async admit(triple) {
      const open = await touchIfOpen(triple);
      if (open !== undefined) return open;
      // Each step is one conditional write; losing a race (a concurrent first
      // use, the reaper closing it) means reading again.
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
        const state = await admitOnce(triple);
        if (state !== undefined) return state;
      }
      throw new ServiceError('unavailable', 'the session kept changing; retry the start', { retryable: true });
    },

    async ensure(triple) {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
        const existing = await sessions.find(triple);
        if (existing !== null) return isTombstone(existing.status) ? undefined : existing;
        const at = now();
        const inserted = await sessions.insertOpen(triple, at.toISOString());
        if (inserted !== null) {
          await events.opened(triple, at);
          return inserted;
        }
      }
      throw new ServiceError('unavailable', 'the session kept changing', { retryable: true });
    },
  };
}
