import { z } from 'zod';
import { defineInternalEndpoint } from '../internal-def.ts';
import { Count, OwnerTriple } from './shapes.ts';

/** What the erasure removed: the session's tasks and the engine's run state records. */
export const TasksEraseSessionReply = z.object({ tasks_deleted: Count, state_records_deleted: Count });
export type TasksEraseSessionReply = z.infer<typeof TasksEraseSessionReply>;

/**
 * `_tasks.erase_session`: part of the erasure cascade of sessions.delete.
 * Stops the session's live runs, then deletes its tasks and run state.
 * Idempotent. The caller acts for the verified owner: the triple must be the
 * caller's own (401 `identity_required` otherwise).
 */
export const TASKS_ERASE_SESSION = defineInternalEndpoint({
  name: '_tasks.erase_session',
  service: 'run-executor',
  callers: ['session'],
  gate: 'caller',
  request: OwnerTriple,
  reply: TasksEraseSessionReply,
  refusals: {
    runs_still_stopping: {
      code: 'unavailable',
      retryable: true,
      summary: 'a live run of the session did not stop in time; the erasure is retried later',
    },
  },
  summary: "erases a session's tasks and run state",
});
