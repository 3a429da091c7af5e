import { z } from 'zod';
import type { EventDef } from '../event-def.ts';
import { bool, eventsOf, float, int, opaque, payload, safeEvent, str, triple, uint } from './fields.ts';

const audit = eventsOf('audit');

/** audit.admin_scope_used, shape 1: an admin-filtered subscription. */
export const AdminScopeUsedSubscription = payload({ Tenant: str(), User: str(), Session: str(), SubscriberID: uint() });

/** audit.admin_scope_used, shape 2: admin scope or impersonation at the protocol edge. */
export const AdminScopeUsedEdge = payload({
  Actor: triple(),
  Requester: triple(),
  Impersonating: triple(),
  Reason: str(),
  Method: str(),
});

/** Audit, auth, bus, dev and topology events (safe). */
export const AUDIT_EVENTS: readonly EventDef[] = [
  safeEvent(
    'audit',
    'audit.admin_scope_used',
    z.union([AdminScopeUsedSubscription, AdminScopeUsedEdge]),
    'A granted admin or fleet crossing (two shapes: subscription, protocol edge).',
  ),
  audit(
    'audit.redaction_failed',
    { OriginalType: str().describe('event type'), Reason: str() },
    'Redacting a payload failed; the raw payload was not published.',
  ),
  audit('auth.rejected', { Reason: str(), KID: str(), Issuer: str(), Subject: str() }, 'A token failed verification.'),
  audit(
    'bus.dropped',
    { FromSeq: uint(), ToSeq: uint(), DroppedCount: uint(), SubscriberID: uint() },
    'A subscriber missed a range of events (slow consumer or expired cursor).',
  ),
  audit(
    'bus.subscription_idle_closed',
    { SubscriberID: uint(), IdleSeconds: float() },
    'An idle subscription was closed.',
  ),
  audit('distributed.bus_envelope', { Envelope: opaque('bus envelope object') }, 'A bus envelope crossed instances.'),
  audit('topology.changed', { Projection: opaque('topology projection') }, 'The running topology changed.'),
  audit('dev.draft.created', { DraftID: str(), Template: str(), FileCount: int() }, 'A dev draft was created.'),
  audit('dev.draft.discarded', { DraftID: str() }, 'A dev draft was discarded.'),
  audit('dev.draft.previewed', { DraftID: str(), OK: bool() }, 'A dev draft was previewed.'),
  audit('dev.draft.saved', { DraftID: str(), OutputDir: str(), FileCount: int() }, 'A dev draft was saved.'),
  audit('dev.draft.updated', { DraftID: str(), Path: str(), Size: int() }, 'A dev draft was updated.'),
];

export type AdminScopeUsedSubscription = z.infer<typeof AdminScopeUsedSubscription>;
export type AdminScopeUsedEdge = z.infer<typeof AdminScopeUsedEdge>;
