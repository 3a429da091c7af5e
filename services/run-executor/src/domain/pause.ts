import type { PausedRun, PauseKind } from '@ars/contracts';

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
  kind: PauseKind;
  /** The tool awaiting approval (kind `approval`), or the MCP server id awaiting authorization (kind `auth`). */
  tool?: string;
  /** kind `auth`: the `state` of the authorization flow the pause waits for now (tool.auth_required State). */
  auth_state?: string;
  /** kind `auth`: where the user authorizes (tool.auth_required AuthorizeURL of that flow). */
  authorize_url?: string;
  /** kind `auth`: whose grant the flow makes (tenant, user or session). */
  binding_scope?: string;
  tags?: string[];
  args_summary?: unknown;
  /** ISO 8601 UTC. */
  requested_at: string;
  /** When an approval timeout (kind `approval`) or the authorization flow (kind `auth`) ends the wait. */
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
    ...(pause.authorize_url === undefined ? {} : { authorize_url: pause.authorize_url }),
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
