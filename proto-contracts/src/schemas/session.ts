import { z } from 'zod';
import { Id, Timestamp, filterList, record, timeWindow } from './common.ts';
import { TaskStatus } from './task.ts';

/** Session states visible in the catalog; an erased session is gone (tombstoned). */
export const SESSION_STATUSES = ['open', 'closed'] as const;
export const SessionStatus = z.enum(SESSION_STATUSES);
export type SessionStatus = z.infer<typeof SessionStatus>;

/** Where a session title came from. */
export const TitleSource = z.enum(['auto', 'manual']);
export type TitleSource = z.infer<typeof TitleSource>;

/** A session record: a conversation under (tenant, user). */
export const Session = record({
  session_id: z.string(),
  tenant: z.string(),
  user: z.string(),
  status: SessionStatus,
  title: z.string().optional(),
  title_source: TitleSource.optional().describe('manual after sessions.set_title; auto when named from the first turn'),
  created_at: Timestamp,
  last_seen_at: Timestamp,
  closed_at: Timestamp.optional(),
  closed_reason: z.string().optional().describe('e.g. idle (reaped); absent while open'),
  task_count: z.int().nonnegative().optional(),
});
export type Session = z.infer<typeof Session>;

/** Filters of sessions.list; `tenant_ids` naming another tenant needs admin (else scope_mismatch). */
export const SessionsListFilter = z.strictObject({
  tenant_ids: filterList(Id).optional(),
  status: filterList(SessionStatus).optional(),
  text: z.string().min(1).max(1024).optional().describe('free text matched against the title'),
});
export type SessionsListFilter = z.infer<typeof SessionsListFilter>;

/** Kinds of state records kept per session. */
export const StateRecordKind = z.enum(['task_state', 'turn']);
export type StateRecordKind = z.infer<typeof StateRecordKind>;

/** One state record of a session: a task state transition or a conversation turn, in order. */
export const StateRecord = record({
  seq: z.int().nonnegative().describe('position in the session history, strictly increasing'),
  kind: StateRecordKind,
  task_id: z.string().optional(),
  status: TaskStatus.optional().describe('task_state: the new status'),
  prior_status: TaskStatus.optional().describe('task_state: the status before'),
  role: z.string().optional().describe('turn: user or assistant'),
  content: z.string().optional().describe('turn: the message text'),
  occurred_at: Timestamp,
});
export type StateRecord = z.infer<typeof StateRecord>;

/** Filters of state.history. */
export const StateHistoryFilter = z.strictObject({
  run: Id.optional().describe('only records of this task'),
  kinds: filterList(StateRecordKind).optional(),
  ...timeWindow,
});
export type StateHistoryFilter = z.infer<typeof StateHistoryFilter>;
