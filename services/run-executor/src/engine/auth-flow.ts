import type { AuthCompletionEnvelope } from '@ars/contracts';
import type { PauseRecord } from '../domain/pause.ts';
import { occurredAt } from './run-events.ts';
import type { AuthVerdict, RunState } from './run-state.ts';

/**
 * The ends of a wait for the user to authorize an OAuth-bound MCP server (a
 * pause of kind `auth`, opened by `auth-wait.ts`): the tool host's
 * {@link AuthCompletionEnvelope} on the run's inbox, a resume, approve or
 * reject control naming the pause, the flow's expiry, or (on a redelivered
 * run) the grant found in the catalogue. Each resolves the pause record
 * first (atomic: exactly one of them wins), narrates it, then hands its
 * verdict to the wait, or keeps it for the wait about to be set up.
 */

/** What a resolved `auth` pause records as its decision (`pause.resumed` Decision is the control's, else below). */
const DECISIONS = {
  authorized: 'authorized',
  denied: 'denied',
  expired: 'timeout_reject',
} as const;

/** The longest delay `setTimeout` takes (about 24.8 days); a flow lives minutes. */
const MAX_TIMER_MS = 2_147_483_647;

/** The fixed event id of a pause's `tool.auth_completed`: published once, whichever end found the grant. */
export function authCompletedEventId(taskId: string, token: string): string {
  return `${taskId}:tool.auth_completed:${token}`;
}

function serverOf(record: PauseRecord): string {
  return record.tool ?? '';
}

/** Resolves an open `auth` pause of the run once; null when it was resolved already. */
export async function resolveAuthPause(run: RunState, token: string, decision: string): Promise<PauseRecord | null> {
  run.signals.assertLease();
  const resolved = await run.deps.runStates.resolvePause(token, run.taskId, decision, occurredAt());
  run.authPauses.delete(token);
  if (resolved !== null) run.resolvedTokens.add(token);
  return resolved;
}

/** Hands `verdict` to the wait on `token`, or keeps it for the wait about to be set up on it. */
function deliver(run: RunState, token: string, verdict: AuthVerdict): void {
  if (run.auth?.record.token === token) run.auth.settle(verdict);
  else run.authVerdicts.set(token, verdict);
}

/** `tool.auth_completed` (once per pause) and `pause.resumed` of an authorization that completed. */
function narrateAuthorized(run: RunState, record: PauseRecord, state: string, bindingScope: string): void {
  const server = serverOf(record);
  run.events.emit(
    'tool.auth_completed',
    { Source: server, BindingScope: bindingScope, State: state, PauseToken: record.token },
    authCompletedEventId(run.taskId, record.token),
  );
  run.events.emit('pause.resumed', {
    Token: record.token,
    Reason: `authorization of MCP server ${server} completed`,
    Decision: 'resume',
  });
}

/**
 * The grant of `record`'s server exists now, found without a completion
 * (the host answered `bound`, or a redelivered run's catalogue no longer
 * lists the server): the pause is resolved as authorized. No wait is on it.
 */
export async function resolveAuthorized(run: RunState, record: PauseRecord): Promise<void> {
  const resolved = await resolveAuthPause(run, record.token, DECISIONS.authorized);
  if (resolved === null) return;
  narrateAuthorized(run, resolved, resolved.auth_state ?? '', resolved.binding_scope ?? '');
}

/**
 * The tool host's completion of the flow a pause waits for. Idempotent by
 * its `event_id`; a token that names no open `auth` pause of the run (or
 * another server's) is logged and ignored. `completed` narrates
 * `tool.auth_completed` and `pause.resumed`; `denied` only `pause.resumed`
 * (Decision `reject`, Reason naming the server and the authorization
 * server's error): the run then ends as a rejected gated step does.
 */
export async function applyAuthCompletion(run: RunState, envelope: AuthCompletionEnvelope): Promise<void> {
  if (!run.signals.leaseHeld() || run.signals.terminated) return;
  const { auth } = envelope;
  const record = run.authPauses.get(auth.pause_token);
  if (record === undefined || serverOf(record) !== auth.server_id) {
    // Not recorded: a stray envelope never uses up the event id of the one the pause waits for.
    run.log.warn(
      { pauseToken: auth.pause_token, server: auth.server_id, outcome: auth.outcome },
      'authorization completion for no open authorization of the run ignored',
    );
    return;
  }
  const first = await run.deps.runStates
    .recordControl(run.taskId, run.owner, envelope.event_id)
    .catch((error: unknown) => {
      // Unrecorded, it still applies: resolving the pause is what makes it happen once.
      run.log.warn({ err: error }, 'authorization completion not recorded; applied anyway');
      return true;
    });
  if (!first) return;
  const completed = auth.outcome === 'completed';
  const resolved = await resolveAuthPause(run, record.token, completed ? DECISIONS.authorized : DECISIONS.denied);
  if (resolved === null) return;
  if (completed) {
    narrateAuthorized(run, resolved, auth.state, auth.binding_scope);
  } else {
    const why = auth.reason === undefined ? '' : `: ${auth.reason}`;
    run.log.warn({ server: auth.server_id, reason: auth.reason }, 'the user did not authorize the MCP server');
    run.events.emit('pause.resumed', {
      Token: record.token,
      Reason: `authorization of MCP server ${auth.server_id} denied${why}`,
      Decision: 'reject',
    });
  }
  deliver(run, record.token, completed ? 'authorized' : 'denied');
}

/**
 * A resume, approve or reject control resolved an `auth` pause (see
 * {@link resolveAuthPause}): `pause.resumed` with the control's decision,
 * then the wait ends: asked again (resume, approve) or denied (reject).
 */
export function settleAuthByControl(
  run: RunState,
  record: PauseRecord,
  decision: 'resume' | 'approve' | 'reject',
  reason: string,
): void {
  run.events.emit('pause.resumed', { Token: record.token, Reason: reason, Decision: decision });
  deliver(run, record.token, decision === 'reject' ? 'denied' : 'resumed');
}

async function authExpired(run: RunState, record: PauseRecord): Promise<void> {
  try {
    const resolved = await resolveAuthPause(run, record.token, DECISIONS.expired);
    if (resolved === null) return;
    run.events.emit('pause.resumed', {
      Token: record.token,
      Reason: `authorization of MCP server ${serverOf(record)} expired`,
      Decision: 'reject',
    });
    deliver(run, record.token, 'expired');
  } catch (error) {
    run.log.warn({ err: error }, 'authorization expiry could not be applied');
  }
}

/**
 * Waits for the end of `record`'s authorization: a verdict that came early
 * is taken at once; a cancellation, drain or lost lease ends the wait with
 * `stop`; the flow's `expires_at` with `expired`.
 */
export function waitForAuth(run: RunState, record: PauseRecord): Promise<AuthVerdict> {
  const early = run.authVerdicts.get(record.token);
  if (early !== undefined) {
    run.authVerdicts.delete(record.token);
    return Promise.resolve(early);
  }
  return new Promise<AuthVerdict>((resolve) => {
    const settle = (verdict: AuthVerdict): void => {
      if (run.auth?.record.token === record.token) run.auth = undefined;
      release();
      clearTimeout(run.authTimer);
      resolve(verdict);
    };
    const release = run.signals.holdHumanWait(() => settle('stop'));
    run.auth = { record, settle };
    if (record.expires_at !== undefined) {
      const delay = Math.min(MAX_TIMER_MS, Math.max(0, Date.parse(record.expires_at) - Date.now()));
      run.authTimer = setTimeout(() => void authExpired(run, record), delay);
    }
  });
}
