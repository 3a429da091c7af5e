import type { PausedRun } from '@ars/contracts';

/**
 * A pause record: one parked run waiting for resume/approve/reject. Written
 * by the engine (`pause.requested`), resolved by it (`pause.resumed`: sets
 * `resolved_at` and `decision`); `pause.list` reads the unresolved ones.
 * `_id` = `token`.
 */
export interface PauseRecord {
  _id: string;
  token: string;
  task_id: string;
  tenant: string;
  user: string;
  session: string;
  reason: string;
  kind: 'pause' | 'approval';
  /** The tool awaiting approval (kind `approval`). */
  tool?: string;
  tags?: string[];
  args_summary?: unknown;
  /** ISO 8601 UTC. */
  requested_at: string;
  /** When an approval timeout ends the wait, if the policy has one. */
  expires_at?: string;
  resolved_at?: string;
  decision?: string;
}

/** The wire `PausedRun` of a pause record. */
export function toPausedRunView(pause: PauseRecord): PausedRun {
  return {
    token: pause.token,
    task_id: pause.task_id,
    reason: pause.reason,
    ...(pause.tool === undefined ? {} : { tool: pause.tool }),
    requested_at: pause.requested_at,
    tenant: pause.tenant,
    user: pause.user,
    session: pause.session,
    ...(pause.tags === undefined ? {} : { tags: pause.tags }),
    ...(pause.args_summary === undefined ? {} : { args_summary: pause.args_summary }),
    ...(pause.expires_at === undefined ? {} : { expires_at: pause.expires_at }),
    kind: pause.kind,
  };
}
