import type { Store, StoreDocument } from '@ars/store';
import { sessionKey } from '../domain/session-key.ts';
import type { SessionOwner } from '../domain/session-key.ts';

/** Sessions whose erasure cascade reached the run-executor: one document per erased (tenant, user, session). */
export const ERASED_SESSIONS_COLLECTION = 'erased_sessions';

/** The (tenant, user, session) a marker names. */
export type ErasedTriple = SessionOwner;

interface ErasedSessionDocument extends StoreDocument, ErasedTriple {
  erased_at: string;
}

/**
 * The run-executor's own record of erased sessions. `_tasks.erase_session`
 * writes the marker before it deletes the session's tasks, and a start whose
 * session admission was reused (not asked again) reads it after inserting
 * its task: either the start sees the marker and withdraws its task, or its
 * task was inserted before the marker and the erasure's delete, which comes
 * after the marker, removes it. Erasure is permanent, so markers are never
 * deleted (one small document per erased session).
 */
export interface ErasedSessionRepository {
  /** Records the erasure (idempotent). */
  mark(triple: ErasedTriple, at: string): Promise<void>;
  isErased(triple: ErasedTriple): Promise<boolean>;
}

/** The store-backed repository. */
export function createErasedSessionRepository(store: Store): ErasedSessionRepository {
  const markers = store.collection<ErasedSessionDocument>(ERASED_SESSIONS_COLLECTION);
  return {
    async mark(triple, at) {
      await markers.updateOne(
        { _id: sessionKey(triple) },
        { $setOnInsert: { tenant: triple.tenant, user: triple.user, session: triple.session, erased_at: at } },
        { upsert: true },
      );
    },
    async isErased(triple) {
      return (await markers.findOne({ _id: sessionKey(triple) }, { projection: { _id: 1 } })) !== null;
    },
  };
}
