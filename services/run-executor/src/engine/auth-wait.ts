import { randomUUID } from 'node:crypto';
import { isServiceError, OAUTH_BEGIN, refusalOf, ServiceError } from '@ars/contracts';
import type { OAuthBeginReply, ToolsCatalogueReply } from '@ars/contracts';
import type { PauseRecord } from '../domain/pause.ts';
import { AgentConfigRefused } from './agent-config.ts';
import type { AgentRunConfig } from './agent-config.ts';
import { resolveAuthorized, resolveAuthPause, waitForAuth } from './auth-flow.ts';
import { RUN_ERROR_CODES } from './planner.ts';
import { occurredAt } from './run-events.ts';
import { finishRun } from './run-finish.ts';
import type { AuthVerdict, RunState } from './run-state.ts';

/**
 * A run waits for its user to authorize an OAuth-bound MCP server
 * (proto-contracts `internal/oauth.ts`), as it waits for a human approval:
 *
 * - before planning, for each server `_tools.catalogue` lists under
 *   `auth_required` (not disabled by the run's source disables), one after
 *   another ({@link authorizedCatalogue}); and mid-run, when `_mcp.call_tool`
 *   refuses `auth_required` (the call is then made once more: `run-step.ts`);
 * - `_oauth.begin` with a pause token: `bound` (another run completed it)
 *   means ask again, no pause; `authorize` opens a pause record of kind
 *   `auth` (`tool` = the server id, `expires_at` = the flow's) and publishes
 *   `tool.auth_required` and `pause.requested`;
 * - the wait ends as `auth-flow.ts` tells: completed or resumed → ask the
 *   catalogue again (a server still listed begins again: a new pause and
 *   state); denied or rejected → the run fails `constraints_conflict`, as a
 *   rejected gated step; expired → `approval_timeout`, as an approval
 *   timeout; cancelled, drained or lost → `stop`, as an approval wait;
 * - a redelivered run keeps its open `auth` pauses: one whose server the
 *   catalogue no longer lists is resolved as authorized
 *   (`tool.auth_completed` under a fixed id); one still listed is reused,
 *   same token, with a fresh `_oauth.begin` (a new `tool.auth_required`, no
 *   second `pause.requested`).
 */

/**
 * How one server's authorization ended for the run: go on (`authorized`: the
 * flow completed or a control resumed; `bound`: the grant already existed),
 * go on without it (`skipped`: the host says it is no OAuth server), or the
 * run ended or must stop.
 */
export type AuthorizationOutcome = 'authorized' | 'bound' | 'skipped' | 'ended' | 'stop';

/** `bound` answers for one server whose catalogue entry stays `auth_required`: past this the host is inconsistent. */
const MAX_BOUND_ANSWERS = 3;

/**
 * The catalogue once every server of the run that needs the user's
 * authorization has it (servers the host refuses to authorize left out);
 * undefined when the run ended or must stop while it waited.
 */
export async function authorizedCatalogue(
  run: RunState,
  agent: AgentRunConfig,
  fetch: () => Promise<ToolsCatalogueReply>,
): Promise<ToolsCatalogueReply | undefined> {
  const disabled = new Set(agent.sourceDisables);
  const skipped = new Set<string>();
  const bound = new Map<string, number>();
  for (;;) {
    const catalogue = await fetch();
    const listed = new Set(catalogue.auth_required.map((server) => server.server_id));
    const waiting = [...listed].filter((server) => !disabled.has(server) && !skipped.has(server));
    await closeRestored(run, listed, new Set(waiting));
    const next = waiting[0];
    if (next === undefined) return catalogue;
    const outcome = await awaitAuthorization(run, agent.agentId, next);
    if (outcome === 'skipped') skipped.add(next);
    else if (outcome === 'bound') {
      const times = (bound.get(next) ?? 0) + 1;
      bound.set(next, times);
      if (times >= MAX_BOUND_ANSWERS) {
        throw new ServiceError(
          'unavailable',
          `the tool host answers bound for ${next} but still lists it auth_required`,
        );
      }
    } else if (outcome !== 'authorized') return undefined;
  }
}

/**
 * The run's open `auth` pauses whose server needs nothing now: authorized
 * when the catalogue no longer lists it, closed quietly when the run does
 * not wait for it (its source disabled, or the host refused to begin).
 */
async function closeRestored(run: RunState, listed: ReadonlySet<string>, waiting: ReadonlySet<string>): Promise<void> {
  for (const record of [...run.authPauses.values()]) {
    const server = record.tool ?? '';
    if (!listed.has(server)) await resolveAuthorized(run, record);
    else if (!waiting.has(server)) await resolveAuthPause(run, record.token, 'superseded');
  }
}

/** True when the run must not start a wait now (a drain hands it back instead). */
function stopping(run: RunState): boolean {
  const { signals } = run;
  if (signals.terminated || signals.exitRequest !== undefined || signals.cancel !== undefined) return true;
  if (!signals.draining) return false;
  signals.requestHandback();
  return true;
}

/**
 * Waits for the user to authorize `serverId` for the run (reusing the run's
 * open `auth` pause of that server). A denial or an expiry ends the run here.
 */
export async function awaitAuthorization(
  run: RunState,
  agentId: string,
  serverId: string,
): Promise<AuthorizationOutcome> {
  if (stopping(run)) return 'stop';
  const reused = [...run.authPauses.values()].find((record) => record.tool === serverId);
  const token = reused?.token ?? randomUUID();
  const reply = await begin(run, agentId, serverId, token);
  if (reply === undefined) {
    if (reused !== undefined) await resolveAuthPause(run, token, 'superseded');
    return 'skipped';
  }
  if (reply.status === 'bound') {
    if (reused !== undefined) await resolveAuthorized(run, reused);
    return 'bound';
  }
  let record: PauseRecord;
  if (reused === undefined) record = await openAuthPause(run, token, reply);
  else {
    const renewed = await renewAuthPause(run, reused, reply);
    // Resolved while `_oauth.begin` was under way: its verdict was kept for this wait (else another end closed it).
    if (renewed === undefined && !run.authVerdicts.has(token)) return 'authorized';
    record = renewed ?? reused;
  }
  if (stopping(run)) return 'stop';
  return conclude(run, serverId, await waitForAuth(run, record));
}

async function conclude(run: RunState, serverId: string, verdict: AuthVerdict): Promise<AuthorizationOutcome> {
  switch (verdict) {
    case 'authorized':
    case 'resumed':
      return 'authorized';
    case 'stop':
      return 'stop';
    case 'denied':
    case 'expired': {
      const code = verdict === 'denied' ? RUN_ERROR_CODES.constraintsConflict : RUN_ERROR_CODES.approvalTimeout;
      run.log.warn({ server: serverId, verdict, errorCode: code }, 'the run ends: an MCP server was not authorized');
      await finishRun(run, { status: 'failed', error_code: code });
      return 'ended';
    }
  }
}

/**
 * `_oauth.begin`; undefined when the host refuses to authorize the server
 * (`unknown_server`, `not_oauth`: its tools stay out of the run). An unknown
 * agent fails the run `agent_unavailable`; a host without the endpoint or an
 * authorization server not answering retries the run later.
 */
async function begin(
  run: RunState,
  agentId: string,
  serverId: string,
  pauseToken: string,
): Promise<OAuthBeginReply | undefined> {
  try {
    return await run.deps.mcp.beginAuthorization(run.owner, { agentId, run: run.taskId, serverId, pauseToken });
  } catch (error) {
    const reason = refusalOf(OAUTH_BEGIN, error);
    if (reason === 'unknown_agent') throw new AgentConfigRefused((error as Error).message);
    if (reason === 'unknown_server' || reason === 'not_oauth') {
      run.log.warn({ server: serverId, reason }, 'the tool host does not authorize the MCP server: its tools stay out');
      return undefined;
    }
    if (isServiceError(error) && error.code === 'unimplemented') {
      throw new ServiceError('unavailable', 'agent-registry does not serve _oauth.begin', { cause: error });
    }
    throw error;
  }
}

type AuthorizeReply = Extract<OAuthBeginReply, { status: 'authorize' }>;

function announce(run: RunState, record: PauseRecord, reply: AuthorizeReply): void {
  run.events.emit('tool.auth_required', {
    Source: reply.server_id,
    SourceName: reply.provider_name,
    BindingScope: reply.binding_scope,
    AuthorizeURL: reply.authorize_url,
    State: reply.state,
    PauseToken: record.token,
    Scopes: [...reply.scopes],
  });
}

async function openAuthPause(run: RunState, token: string, reply: AuthorizeReply): Promise<PauseRecord> {
  const record: PauseRecord = {
    _id: token,
    token,
    task_id: run.taskId,
    ...run.owner,
    kind: 'auth',
    reason: `MCP server ${reply.server_id} requires authorization (${reply.provider_name})`,
    tool: reply.server_id,
    auth_state: reply.state,
    authorize_url: reply.authorize_url,
    binding_scope: reply.binding_scope,
    requested_at: occurredAt(),
    expires_at: reply.expires_at,
  };
  run.signals.assertLease();
  await run.deps.runStates.createPause(record);
  run.pausesOpened = true;
  run.authPauses.set(token, record);
  announce(run, record, reply);
  run.events.emit('pause.requested', { Token: token, Reason: record.reason });
  return record;
}

/** The open pause, pointed at the new flow; undefined when it was resolved meanwhile. */
async function renewAuthPause(
  run: RunState,
  record: PauseRecord,
  reply: AuthorizeReply,
): Promise<PauseRecord | undefined> {
  const flow = { auth_state: reply.state, authorize_url: reply.authorize_url, expires_at: reply.expires_at };
  run.signals.assertLease();
  const renewed = await run.deps.runStates.renewAuthPause(record.token, run.taskId, flow);
  if (renewed === null) return undefined;
  run.authPauses.set(record.token, renewed);
  announce(run, renewed, reply);
  return renewed;
}
