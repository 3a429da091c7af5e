import type { z } from 'zod';
import { defineEvent } from '../event-def.ts';
import type { EventDef } from '../event-def.ts';
import { bool, int, list, opaque, payload, str, uint } from './fields.ts';

/** The nine notification types (redacted class). */
export const NOTIFICATION_TYPES = [
  'notification.auth_required',
  'notification.governance_budget_exceeded',
  'notification.identity_rejected',
  'notification.pause_requested',
  'notification.task_completed',
  'notification.task_failed',
  'notification.task_group_cancelled',
  'notification.task_group_resolved',
  'notification.tool_approval_requested',
] as const;

/** The declared shape all notifications share; subscribers receive its redacted key/value map. */
export const NotificationPayload = payload({
  Class: str().describe('event type'),
  Severity: str().describe('severity value'),
  Summary: str(),
  DeepLink: str(),
  OriginEventType: str().describe('event type'),
  OriginEventSequence: uint(),
  TaskID: str(),
  GroupID: str(),
  Members: list(opaque('member outcome summary')),
  MembersTruncated: bool(),
  MemberSucceeded: int(),
  MemberFailed: int(),
  MemberCancelled: int(),
});

/** Notification events (redacted class, one shared declared shape). */
export const NOTIFICATION_EVENTS: readonly EventDef[] = NOTIFICATION_TYPES.map((type) =>
  defineEvent({
    type,
    group: 'notification',
    class: 'redacted',
    payload: NotificationPayload,
    summary: `Notification derived from ${type.slice('notification.'.length).replaceAll('_', ' ')} (redacted map).`,
  }),
);

export type NotificationPayload = z.infer<typeof NotificationPayload>;
