import { randomUUID } from 'node:crypto';
import {
  controlRequestFor,
  getMethod,
  isErrorCode,
  PROTOCOL_VERSION,
  ServiceError,
  STEERING_CONTROLS,
} from '@ars/contracts';
import type { ControlResponse, SteeringControl, SteeringTier, VerifiedIdentity } from '@ars/contracts';
import { ControlDeliveryError, requestControl } from '@ars/bus';
import type { ControlInboxReply, RpcHandler } from '@ars/bus';
import { authorizeControl } from '../domain/steering.ts';
import type { ControlEnvelope } from '../domain/steering.ts';
import type { ApiDeps } from './deps.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';

/** The inbox's refusal as the caller's error: a catalogue code, else a malformed reply. */
function refusal(reply: Extract<ControlInboxReply, { accepted: false }>): ServiceError {
  if (!isErrorCode(reply.code)) return new ServiceError('internal', 'malformed reply from the run inbox');
  return new ServiceError(reply.code, reply.message ?? 'the run refused the control');
}

/** A control the inbox gave no usable answer to, as the caller's error. */
function undelivered(error: ControlDeliveryError, timeoutMs: number): ServiceError {
  switch (error.reason) {
    case 'no_live_inbox':
      return new ServiceError('not_found', 'run has no live inbox', { cause: error });
    case 'timeout':
      return new ServiceError('timeout', `the run inbox did not acknowledge within ${timeoutMs} ms`, { cause: error });
    case 'malformed_reply':
      return new ServiceError('internal', 'malformed reply from the run inbox', { cause: error });
    case 'unreachable':
      return new ServiceError('unavailable', 'the control could not be delivered', { cause: error });
  }
}

/** Sends the envelope to the run's live inbox and waits for its acknowledgement. */
export async function deliver(deps: ApiDeps, taskId: string, envelope: ControlEnvelope): Promise<void> {
  const timeoutMs = deps.settings.controlReplyTimeoutMs;
  let reply: ControlInboxReply;
  try {
    reply = await requestControl(deps.bus, taskId, envelope, { timeoutMs });
  } catch (error) {
    if (error instanceof ControlDeliveryError) throw undelivered(error, timeoutMs);
    throw error;
  }
  if (!reply.accepted) throw refusal(reply);
}

/** A control's payload (every control's schema is an object; absent is `{}`). */
function payloadObject(payload: unknown): Record<string, unknown> {
  if (payload === undefined) return {};
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new ServiceError('invalid_request', 'payload: not an object');
  }
  return { ...payload };
}

/**
 * One steering control, API side: validate (the registry schema, before this
 * runs), load the task named by `identity.run`, check authority with
 * `authorizeControl` (404 for a missing task, 403 `scope_mismatch` for
 * another tenant's without admin or below the method's minimum, 404 for a
 * terminal task), pin a tokenless approve or reject to the pending approval,
 * then request the live inbox `controlSubject(task_id)` with
 * `{method, payload, event_id, caller, caller_tier}`. No responders means
 * the run has no live inbox (never started, or ended): 404 `not_found`.
 * 200 `{accepted, method, protocol_version}` only says "enqueued"; the
 * effect arrives as `control.*` events. Payload bounds (422) are the
 * gateway's.
 */
function createControlHandler(deps: ApiDeps, control: SteeringControl, minimum: SteeringTier): RpcHandler {
  // The registry's schema of this control: its payload schema keeps a payload verbatim (inject_context's `__proto__`).
  return typedMethod(controlRequestFor(control), async ({ identity, body: request }): Promise<ControlResponse> => {
    const target = reconcileIdentity(control, identity, request.identity);
    const taskId = target.run;
    if (taskId === undefined) throw new ServiceError('invalid_request', 'identity.run (the task id) is mandatory');
    const task = await deps.tasks.getTask(taskId);
    const tier = authorizeControl(identity, task, { name: control, minimum });
    const envelope: ControlEnvelope = {
      method: control,
      payload: await pinnedPayload(deps, control, taskId, payloadObject(request.payload)),
      event_id: request.event_id ?? randomUUID(),
      caller: callerOf(identity),
      caller_tier: tier,
    };
    await deliver(deps, taskId, envelope);
    return { accepted: true, method: control, protocol_version: PROTOCOL_VERSION };
  });
}

/**
 * A tokenless approve or reject decides the approval the run waited for
 * when the control was accepted: its token is added here, so that a control
 * that reaches the inbox late (after that approval was resolved and the run
 * asked for the next) is rejected `already_resolved` instead of deciding a
 * gate its sender never saw. With no approval pending, the inbox decides
 * what was pending on receipt (a live pause, for approve).
 */
async function pinnedPayload(
  deps: ApiDeps,
  control: string,
  taskId: string,
  payload: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if ((control !== 'approve' && control !== 'reject') || payload.token !== undefined) return payload;
  const pending = await deps.tasks.openApproval(taskId);
  return pending === null ? payload : { ...payload, token: pending.token };
}

function callerOf(identity: VerifiedIdentity): VerifiedIdentity {
  return { tenant: identity.tenant, user: identity.user, session: identity.session, scopes: [...identity.scopes] };
}

/** The nine controls' handlers, by method name, with each method's minimum from the registry. */
export function createControlHandlers(deps: ApiDeps): Record<string, RpcHandler> {
  return Object.fromEntries(
    STEERING_CONTROLS.map((control) => {
      const minimum = getMethod(control)?.steering;
      if (minimum === undefined) throw new Error(`registry row of ${control} has no steering minimum`);
      return [control, createControlHandler(deps, control, minimum)];
    }),
  );
}
