import { z } from 'zod';
import { defineInternalEndpoint } from '../internal-def.ts';
import { tripleShape } from './shapes.ts';

/**
 * Body of `_session.admit`: the full triple of the start and, optionally, the
 * turn it opens (the new task's id and query), remembered for recording that
 * turn when its `task.spawned` arrives.
 */
export const SessionAdmitRequest = z.strictObject({
  ...tripleShape,
  turn: z.strictObject({ task_id: z.string().min(1), query: z.string() }).optional(),
});
export type SessionAdmitRequest = z.infer<typeof SessionAdmitRequest>;

/** What the start found, and how long the caller may reuse this answer for later starts on the session. */
export const SessionAdmitReply = z.object({
  state: z.enum(['opened', 'reopened', 'open']).describe('a new session, a reopened one, or an open one'),
  reuse_ms: z.int().nonnegative().optional().describe('ms the answer may be reused; absent or 0: not at all'),
});
export type SessionAdmitReply = z.infer<typeof SessionAdmitReply>;

/**
 * `_session.admit`: asked by the run-executor before it accepts a start.
 * Opens the session on first use, reopens a closed one, touches an open one.
 */
export const SESSION_ADMIT = defineInternalEndpoint({
  name: '_session.admit',
  service: 'session',
  callers: ['run-executor'],
  gate: 'caller',
  request: SessionAdmitRequest,
  reply: SessionAdmitReply,
  refusals: {
    session_erased: {
      code: 'session_erased',
      retryable: false,
      summary: 'the session was erased by sessions.delete: the start fails 410, use a fresh session id',
    },
  },
  summary: 'opens, reopens or touches the session of a start',
});
