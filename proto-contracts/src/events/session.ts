import type { EventDef } from '../event-def.ts';
import { bool, epochMs, eventsOf, int, str } from './fields.ts';

const session = eventsOf('session');

/** Session events (safe). */
export const SESSION_EVENTS: readonly EventDef[] = [
  session('session.opened', { SessionID: str(), OpenedAt: epochMs() }, 'A session was created on first use.'),
  session(
    'session.reopened',
    { SessionID: str(), ReopenedAt: epochMs(), PriorClosedReason: str() },
    'A closed session was reopened by a start.',
  ),
  session('session.closed', { SessionID: str(), ClosedAt: epochMs(), Reason: str() }, 'A session was closed.'),
  session('session.gc_reaped', { SessionID: str(), ReapedAt: epochMs(), Reason: str() }, 'An idle session was reaped.'),
  session(
    'session.erased',
    {
      SessionID: str(),
      StateRecordsDeleted: int(),
      ArtifactsDeleted: int(),
      MemoryPurged: bool(),
      ErasedAt: epochMs(),
    },
    'A session was erased (right to erasure).',
  ),
  session('session.touched', { SessionID: str(), LastSeen: epochMs() }, 'Activity updated a session.'),
  session(
    'session.title_changed',
    { SessionID: str(), Source: str() },
    'A session title changed (Source: auto or manual).',
  ),
  session('session.naming_failed', { SessionID: str(), ErrorClass: str() }, 'Automatic session naming failed.'),
];
