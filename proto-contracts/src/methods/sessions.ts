import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import { Id, Timestamp, pageOf, pageRequest, requestOf, versioned } from '../schemas/common.ts';
import { Session, SessionsListFilter } from '../schemas/session.ts';
import { StatusCounts } from '../schemas/task.ts';
import { onBoth } from './routing.ts';

/** sessions.delete: erase the caller's own verified session; no other member. */
export const SessionsDeleteRequest = requestOf({});
export type SessionsDeleteRequest = z.infer<typeof SessionsDeleteRequest>;

/** What the erasure removed; the id is tombstoned (a later start is `session_erased`). */
export const SessionsDeleteResponse = versioned({
  session_id: z.string(),
  erased: z.literal(true),
  tasks_deleted: z.int().nonnegative(),
  state_records_deleted: z.int().nonnegative(),
  artifacts_deleted: z.int().nonnegative(),
  memory_purged: z.boolean(),
  events_purged: z.boolean().describe("the session's events were purged from the stream"),
  erased_at: Timestamp,
});
export type SessionsDeleteResponse = z.infer<typeof SessionsDeleteResponse>;

/** sessions.inspect: one session of the caller (default: the verified session). */
export const SessionsInspectRequest = requestOf({
  session_id: Id.optional().describe("a session of the caller's (tenant, user); default: the verified session"),
});
export type SessionsInspectRequest = z.infer<typeof SessionsInspectRequest>;

/** A session with its task counters and sizes. */
export const SessionsInspectResponse = versioned({
  session: Session,
  task_counts: StatusCounts,
  artifact_count: z.int().nonnegative(),
  memory_item_count: z.int().nonnegative().optional(),
  last_task_id: z.string().optional(),
});
export type SessionsInspectResponse = z.infer<typeof SessionsInspectResponse>;

/** sessions.list: every session (open and closed) under the caller's (tenant, user). */
export const SessionsListRequest = requestOf({
  filter: SessionsListFilter.optional(),
  ...pageRequest,
});
export type SessionsListRequest = z.infer<typeof SessionsListRequest>;

/** A page of sessions, most recently seen first. */
export const SessionsListResponse = versioned({ ...pageOf(Session) });
export type SessionsListResponse = z.infer<typeof SessionsListResponse>;

/** Maximum characters of a session title. */
export const SESSION_TITLE_MAX = 256;

/** sessions.set_title: the target may be a sibling session of the same owner; provenance is manual. */
export const SessionsSetTitleRequest = requestOf({
  session_id: Id.optional().describe('the target session (same tenant and user); default: the verified session'),
  title: z.string().trim().min(1).max(SESSION_TITLE_MAX),
});
export type SessionsSetTitleRequest = z.infer<typeof SessionsSetTitleRequest>;

/** The session after the change. */
export const SessionsSetTitleResponse = versioned({ session: Session });
export type SessionsSetTitleResponse = z.infer<typeof SessionsSetTitleResponse>;

/** Session methods (session service). No route shown by the spec: served on both route forms. */
export const SESSION_METHODS: readonly MethodDef[] = [
  defineMethod({
    name: 'sessions.delete',
    family: 'sessions',
    ...onBoth('sessions.delete'),
    service: 'session',
    auth: ['M'],
    ownIdentityOnly: true,
    requestName: 'SessionsDeleteRequest',
    responseName: 'SessionsDeleteResponse',
    request: SessionsDeleteRequest,
    response: SessionsDeleteResponse,
    summary: "Erase the caller's own session permanently (right to erasure).",
  }),
  defineMethod({
    name: 'sessions.inspect',
    family: 'sessions',
    ...onBoth('sessions.inspect'),
    service: 'session',
    auth: ['R'],
    requestName: 'SessionsInspectRequest',
    responseName: 'SessionsInspectResponse',
    request: SessionsInspectRequest,
    response: SessionsInspectResponse,
    summary: 'Inspect one session of the caller.',
  }),
  defineMethod({
    name: 'sessions.list',
    family: 'sessions',
    ...onBoth('sessions.list'),
    service: 'session',
    auth: ['R', 'X'],
    requestName: 'SessionsListRequest',
    responseName: 'SessionsListResponse',
    request: SessionsListRequest,
    response: SessionsListResponse,
    summary: "List every session (open and closed) under the caller's tenant and user.",
  }),
  defineMethod({
    name: 'sessions.set_title',
    family: 'sessions',
    ...onBoth('sessions.set_title'),
    service: 'session',
    auth: ['M'],
    requestName: 'SessionsSetTitleRequest',
    responseName: 'SessionsSetTitleResponse',
    request: SessionsSetTitleRequest,
    response: SessionsSetTitleResponse,
    summary: 'Set the title of a session of the caller (manual provenance).',
  }),
];
