import { ServiceError } from '@ars/contracts';
import type { Store, StoreDocument } from '@ars/store';

/** The collection of erased-session markers, in the database of each service that keeps them. */
export const ERASED_SESSIONS_COLLECTION = 'erased_sessions';

/** The (tenant, user, session) a marker names. */
export interface ErasedSessionTriple {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

interface MarkerDocument extends StoreDocument {
  tenant: string;
  user: string;
  session: string;
  erased_at: string;
}

/**
 * A service's own record of the sessions whose erasure cascade reached it.
 * The protocol that makes it race-free: the cascade step writes the marker
 * before it deletes the session's data, and a write under a session checks
 * the marker after it stored: either the writer sees the marker (and takes
 * its write back, refusing `session_erased`), or its write landed before the
 * marker and the cascade's delete, which follows the marker, removes it.
 * Erasure is permanent: markers are never deleted (one small document per
 * erased session).
 */
export interface ErasedSessionMarkers {
  /** Records the erasure of `triple` (idempotent; the first instant is kept). */
  mark(triple: ErasedSessionTriple, at: string): Promise<void>;
  isErased(triple: ErasedSessionTriple): Promise<boolean>;
}

/** `JSON.stringify([tenant, user, session])`: no choice of identifiers makes two triples collide. */
function markerKey(triple: ErasedSessionTriple): string {
  return JSON.stringify([triple.tenant, triple.user, triple.session]);
}

/** The store-backed markers of `store` (the service's own database). */
export function createErasedSessionMarkers(store: Store): ErasedSessionMarkers {
  const markers = store.collection<MarkerDocument>(ERASED_SESSIONS_COLLECTION);
  return {
    async mark(triple, at) {
      await markers.updateOne(
        { _id: markerKey(triple) },
        { $setOnInsert: { tenant: triple.tenant, user: triple.user, session: triple.session, erased_at: at } },
        { upsert: true },
      );
    },
    async isErased(triple) {
      return (await markers.findOne({ _id: markerKey(triple) }, { projection: { _id: 1 } })) !== null;
    },
  };
}

/** 410 `session_erased` for a write under an erased session, naming the method. */
export function sessionErasedError(method: string): ServiceError {
  return new ServiceError(
    'session_erased',
    `${method}: this session was erased by sessions.delete; nothing is written under it again (use a fresh session id)`,
  );
}

/**
 * The check after a write under `triple` (see {@link ErasedSessionMarkers}):
 * when the session is marked erased, `withdraw` takes the write back (erasing
 * what the cascade would) and the call is refused 410 `session_erased`.
 */
export async function refuseWriteIfErased(
  markers: ErasedSessionMarkers,
  triple: ErasedSessionTriple,
  method: string,
  withdraw: () => Promise<unknown>,
): Promise<void> {
  if (!(await markers.isErased(triple))) return;
  await withdraw();
  throw sessionErasedError(method);
}
