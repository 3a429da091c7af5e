import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AuthCompletionEnvelope, CONTROL_PAYLOADS, VerbatimJsonObject } from '@ars/contracts';
import type { SteeringControl } from '@ars/contracts';
import { serveControlInbox } from '@ars/bus';
import type { ControlInboxReply } from '@ars/bus';
import type { PauseRecord } from '../domain/pause.ts';
import { contextEntry } from '../domain/task.ts';
import { applyAuthCompletion, resolveAuthPause, settleAuthByControl } from './auth-flow.ts';
import { occurredAt } from './run-events.ts';
import type { CancelRequest } from './run-signals.ts';
import type { RunState } from './run-state.ts';
import { withControlSpan } from './run-spans.ts';

/**
 * A live run's control inbox (`controlSubject(task_id)`, request/reply) and
 * the effects of the nine steering controls. The inbox answers
 * `{accepted: true}` as soon as a control is queued; the run applies its
 * controls one at a time, in arrival order, each narrated as
 * `control.received`, then `control.applied` (and the effect's own event) or
 * `control.rejected` (`internal` when applying failed unexpectedly). A
 * control's `event_id` is recorded per task, so a repeated control is
 * acknowledged again but applied (and narrated) once. A tokenless approve or
 * reject decides only what was pending when the inbox received it.
 *
 * The inbox also takes the tool host's {@link AuthCompletionEnvelope} (method
 * `auth_completed`): not a steering control (no `control.*` narration), it
 * ends the run's wait for an MCP server's authorization (`auth-flow.ts`).
 */

/** What reaches the inbox: the API side's ControlEnvelope, or a cascading parent's cancellation. */
const Envelope = z.looseObject({
  method: z.string(),
  // As sent: a record schema would drop a `__proto__` member of an injected context.
  payload: VerbatimJsonObject.optional(),
  event_id: z.string().min(1).optional(),
  caller: z.looseObject({ user: z.string() }).optional(),
  caller_tier: z.string().optional(),
  cascade: z.looseObject({ parent_task_id: z.string(), reason: z.string() }).optional(),
});
type Envelope = z.infer<typeof Envelope>;

function parseEnvelope(body: unknown): Envelope | undefined {
  const parsed = Envelope.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The tokens of what a run had pending when a control reached its inbox: the
 * approval it waited for (or, on a redelivered run, the one still open from
 * the earlier executor) and its live pause.
 */
export interface ControlReceipt {
  readonly approval: string | undefined;
  /** The authorization of an MCP server the run waits for. */
  readonly auth?: string | undefined;
  readonly pause: string | undefined;
}

/** What `run` has pending now, for a control received now. */
function receiptOf(run: RunState): ControlReceipt {
  return {
    approval: run.approval?.record.token ?? run.restoredApproval?.token,
    auth: run.auth?.record.token,
    pause: run.pause?.token,
  };
}

/** The tool host's completion of an authorization the run waits for, answered and queued like a control. */
function queueAuthCompletion(run: RunState, body: unknown, reply: (answer: ControlInboxReply) => void): void {
  const parsed = AuthCompletionEnvelope.safeParse(body);
  if (!parsed.success) {
    reply(MALFORMED);
    return;
  }
  reply({ accepted: true });
  run.controls = run.controls
    .then(() => applyAuthCompletion(run, parsed.data))
    .catch((e: unknown) => run.log.warn({ err: e }, 'authorization completion not applied'));
}

const MALFORMED: ControlInboxReply = {
  accepted: false,
  code: 'invalid_request',
  message: 'malformed control envelope',
};

/** Serves the run's inbox; controls are applied on the run's control chain. */
export function openControlInbox(run: RunState): void {
  run.inbox = serveControlInbox(run.deps.bus, run.taskId, (body, reply) => {
    if ((body as { method?: unknown } | undefined)?.method === 'auth_completed') {
      queueAuthCompletion(run, body, reply);
      return;
    }
    const envelope = parseEnvelope(body);
    if (envelope === undefined) {
      reply(MALFORMED);
      return;
    }
    const receipt = receiptOf(run);
    reply({ accepted: true });
    run.controlsQueued += 1;
    run.controls = run.controls
      .then(() => {
        run.controlsQueued -= 1;
        return applyControl(run, envelope, receipt);
      })
      .catch((e: unknown) => run.log.warn({ err: e, control: envelope.method }, 'control not applied'));
  });
}

/**
 * Closes the run's inbox (see `ControlInbox.close`: a control already routed
 * here is still answered, and the run, ended or leaving, rejects it).
 */
export function closeControlInbox(run: RunState): void {
  const inbox = run.inbox;
  run.inbox = undefined;
  inbox?.close();
}

/** Cancels the run; a hard cancel drops its later LLM, tool and planner events at once. */
function cancelRun(run: RunState, request: CancelRequest): void {
  if (request.hard) run.events.seal();
  run.signals.requestCancel(request);
}

/** The narration helpers of one control; `settled` once it was applied or rejected. */
interface Narrator {
  readonly settled: boolean;
  applied(outcome: string): void;
  rejected(reason: string): void;
}

function narrator(run: RunState, envelope: Envelope): Narrator {
  const type = envelope.method;
  let settled = false;
  return {
    get settled() {
      return settled;
    },
    applied: (outcome) => {
      settled = true;
      run.events.emit('control.applied', { Type: type, Outcome: outcome, Err: '' });
    },
    rejected: (reason) => {
      settled = true;
      run.events.emit('control.rejected', { Type: type, Reason: reason, CallerScope: envelope.caller_tier ?? '' });
    },
  };
}

/**
 * Applies one control to the run, received when `receipt` was pending. Once
 * `control.received` is out, the control always ends in `control.applied` or
 * `control.rejected`: a failure while applying it is logged and narrated as
 * rejected `internal`.
 */
export async function applyControl(run: RunState, envelope: Envelope, receipt: ControlReceipt): Promise<void> {
  if (envelope.cascade !== undefined) {
    if (!run.signals.terminated && run.signals.cancel === undefined) {
      cancelRun(run, { reason: envelope.cascade.reason, cascaded: true, hard: envelope.payload?.hard === true });
    }
    return;
  }
  // Another executor has the run (and hears its controls too) once this one's lease is stale.
  if (!run.signals.leaseHeld()) return;
  let first: boolean;
  try {
    first = await run.deps.runStates.recordControl(run.taskId, run.owner, envelope.event_id ?? randomUUID());
  } catch (error) {
    // Accepted, so narrated: unrecorded, the same event_id may be sent again and applied then.
    run.log.error({ err: error, control: envelope.method }, 'control could not be recorded; rejected as internal');
    run.events.emit('control.received', { Type: envelope.method, Outcome: 'received', Err: '' });
    narrator(run, envelope).rejected('internal');
    return;
  }
  if (!first) return;
  run.events.emit('control.received', { Type: envelope.method, Outcome: 'received', Err: '' });
  const say = narrator(run, envelope);
  try {
    await withControlSpan(run.taskId, envelope.method, () => applyReceived(run, envelope, receipt, say));
  } catch (error) {
    run.log.error({ err: error, control: envelope.method }, 'control failed; rejected as internal');
    if (!say.settled) say.rejected('internal');
  }
}

async function applyReceived(run: RunState, envelope: Envelope, receipt: ControlReceipt, say: Narrator): Promise<void> {
  if (run.signals.terminated) return say.rejected('run_ended');
  if (run.signals.exitRequest !== undefined) return say.rejected('executor_draining');
  const schema = CONTROL_PAYLOADS[envelope.method as SteeringControl] as z.ZodType | undefined;
  if (schema === undefined) return say.rejected('unknown_control');
  const parsed = schema.safeParse(envelope.payload ?? {});
  if (!parsed.success) return say.rejected('invalid_payload');
  const payload = parsed.data as Record<string, unknown>;
  const caller = envelope.caller?.user;
  switch (envelope.method as SteeringControl) {
    case 'cancel':
      return cancel(run, say, payload.hard === true, caller);
    case 'pause':
      return pause(run, say, payload.reason as string | undefined);
    case 'resume':
      return resume(run, say, payload.reason as string | undefined, 'resume');
    case 'approve':
    case 'reject':
      return decide(run, say, envelope.method as 'approve' | 'reject', payload, receipt);
    case 'redirect':
      return redirect(run, say, payload.goal as string);
    case 'inject_context':
    case 'user_message':
      return addInput(run, say, envelope.method as 'inject_context' | 'user_message', payload, envelope.event_id);
    case 'prioritize':
      return prioritize(run, say, payload.priority as number);
  }
}

function cancel(run: RunState, say: Narrator, hard: boolean, caller: string | undefined): void {
  const pending = run.signals.cancel;
  if (pending !== undefined && (pending.hard || !hard)) return say.rejected('already_cancelling');
  say.applied(hard ? 'hard_cancel' : 'cancel_at_next_boundary');
  const by = caller === undefined ? '' : ` by ${caller}`;
  cancelRun(run, { reason: `${hard ? 'hard cancel' : 'cancel'} requested${by}`, cascaded: false, hard });
}

async function pause(run: RunState, say: Narrator, reason: string | undefined): Promise<void> {
  if (run.pause !== undefined) return say.rejected('already_paused');
  const token = randomUUID();
  const record: PauseRecord = {
    _id: token,
    token,
    task_id: run.taskId,
    ...run.owner,
    kind: 'pause',
    reason: reason ?? 'pause requested',
    requested_at: occurredAt(),
  };
  await run.deps.runStates.createPause(record);
  run.pausesOpened = true;
  run.pause = record;
  say.applied('park_at_next_boundary');
  run.events.emit('pause.requested', { Token: token, Reason: record.reason });
}

async function resume(
  run: RunState,
  say: Narrator,
  reason: string | undefined,
  decision: 'resume' | 'approve',
): Promise<void> {
  const pending = run.pause;
  if (pending === undefined) {
    const auth = run.auth?.record.token;
    if (auth !== undefined) return decideAuth(run, say, auth, decision, reason ?? '');
    return say.rejected(run.approval !== undefined ? 'approval_pending' : 'not_paused');
  }
  const resolved = await run.deps.runStates.resolvePause(pending.token, run.taskId, decision, occurredAt());
  if (resolved === null) return say.rejected('already_resolved');
  run.resolvedTokens.add(pending.token);
  if (run.pause === pending) run.pause = undefined;
  say.applied('resumed');
  run.events.emit('pause.resumed', { Token: pending.token, Reason: reason ?? '', Decision: decision });
  run.signals.wake();
}

/**
 * resume, approve or reject of a wait for an MCP server's authorization:
 * resume and approve end it and the run asks the catalogue again (a server
 * still needing authorization begins again, with a new pause); reject ends
 * the run as a rejected gated step.
 */
async function decideAuth(
  run: RunState,
  say: Narrator,
  token: string,
  decision: 'resume' | 'approve' | 'reject',
  reason: string,
): Promise<void> {
  const resolved = await resolveAuthPause(run, token, decision);
  if (resolved === null) return say.rejected('already_resolved');
  say.applied(decision === 'reject' ? 'rejected' : 'resumed');
  settleAuthByControl(run, resolved, decision, reason);
}

/**
 * approve / reject of a human-approval gate; approve also advances a live
 * pause. Without a token it decides what was pending when it was received
 * (the approval, else the authorization of an MCP server, else for approve
 * the pause), never something requested while it waited in line: that one
 * was resolved meanwhile (`already_resolved`) or nothing was pending
 * (`no_pending_approval`). Naming an open authorization pause decides it
 * (see {@link decideAuth}).
 */
async function decide(
  run: RunState,
  say: Narrator,
  decision: 'approve' | 'reject',
  payload: Record<string, unknown>,
  receipt: ControlReceipt,
): Promise<void> {
  const reason = typeof payload.reason === 'string' ? payload.reason : '';
  const pending = run.approval;
  const received = receipt.approval ?? receipt.auth ?? (decision === 'approve' ? receipt.pause : undefined);
  const token = typeof payload.token === 'string' ? payload.token : received;
  if (token !== undefined && run.authPauses.has(token)) return decideAuth(run, say, token, decision, reason);
  if (token === undefined || pending === undefined || pending.record.token !== token) {
    if (decision === 'approve' && token !== undefined && token === run.pause?.token) {
      return resume(run, say, reason, 'approve');
    }
    if (token !== undefined && run.resolvedTokens.has(token)) return say.rejected('already_resolved');
    return say.rejected('no_pending_approval');
  }
  const resolved = await run.deps.runStates.resolvePause(token, run.taskId, decision, occurredAt());
  if (resolved === null) return say.rejected('already_resolved');
  run.resolvedTokens.add(token);
  const tool = pending.record.tool ?? '';
  say.applied(decision === 'approve' ? 'approved' : 'rejected');
  if (decision === 'approve') {
    run.events.emit('tool.approved', { Tool: tool, PauseToken: token, ApproverReason: reason });
  } else {
    run.events.emit('tool.rejected', { Tool: tool, PauseToken: token, Reason: reason });
  }
  run.events.emit('pause.resumed', { Token: token, Reason: reason, Decision: decision });
  pending.settle(decision);
}

async function redirect(run: RunState, say: Narrator, goal: string): Promise<void> {
  if (!(await run.deps.tasks.setGoal(run.taskId, goal))) return say.rejected('run_ended');
  run.task.goal = goal;
  say.applied('goal_rewritten');
}

async function addInput(
  run: RunState,
  say: Narrator,
  kind: 'inject_context' | 'user_message',
  payload: Record<string, unknown>,
  eventId: string | undefined,
): Promise<void> {
  const entry = contextEntry(kind, payload, eventId ?? randomUUID());
  if (await run.deps.tasks.appendContext(run.taskId, entry)) run.context.push({ ...entry, at: occurredAt() });
  say.applied('visible_on_next_step');
}

async function prioritize(run: RunState, say: Narrator, priority: number): Promise<void> {
  const prior = await run.deps.tasks.setPriority(run.taskId, priority);
  if (prior === null) return say.rejected('run_ended');
  run.task.priority = priority;
  say.applied('reprioritised');
  run.events.emit('task.prioritised', { TaskID: run.taskId, PriorPriority: prior, NewPriority: priority });
}
