import { randomUUID } from 'node:crypto';
import { getMethod, isErrorCode, PROTOCOL_VERSION, ServiceError, STEERING_CONTROLS } from '@ars/contracts';
import type { ControlResponse, SteeringTier, VerifiedIdentity } from '@ars/contracts';
import { controlSubject, headers } from '@ars/bus';
import type { RpcHandler } from '@ars/bus';
import { injectTraceContext } from '@ars/telemetry';
import { authorizeControl } from '../domain/steering.ts';
import type { ControlEnvelope } from '../domain/steering.ts';
import type { ApiDeps } from './deps.ts';
import { reconcileIdentity } from '@ars/service-kit';
import { identityOf } from './identity.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The transport failure kinds of a core NATS request, told apart by shape
 * because only @ars/bus may import the NATS client's error classes: a
 * `RequestError` answers `isNoResponders()`, its cause is named
 * `NoResponders`; a timeout is named `TimeoutError`.
 */
function requestFailure(error: unknown): 'no_responders' | 'timeout' | 'other' {
  const named = (e: unknown, ...names: string[]) => e instanceof Error && names.includes(e.name);
  const cause = error instanceof Error ? error.cause : undefined;
  const probe = error as { isNoResponders?: () => boolean } | null;
  if (typeof probe?.isNoResponders === 'function' && probe.isNoResponders()) return 'no_responders';
  if (named(error, 'NoResponders', 'NoRespondersError') || named(cause, 'NoResponders', 'NoRespondersError')) {
    return 'no_responders';
  }
  if (named(error, 'TimeoutError') || named(cause, 'TimeoutError')) return 'timeout';
  return 'other';
}

/** Reads the inbox's reply: `{accepted: true}`, or a refusal with a catalogue code. */
function readReply(data: Uint8Array): void {
  let reply: unknown;
  try {
    reply = JSON.parse(decoder.decode(data));
  } catch (error) {
    throw new ServiceError('internal', 'malformed reply from the run inbox', { cause: error });
  }
  const r = (typeof reply === 'object' && reply !== null ? reply : {}) as Record<string, unknown>;
  if (r.accepted === true) return;
  if (r.accepted === false && isErrorCode(r.code)) {
    throw new ServiceError(r.code, typeof r.message === 'string' ? r.message : 'the run refused the control');
  }
  throw new ServiceError('internal', 'malformed reply from the run inbox');
}

/** Sends the envelope to the run's live inbox and waits for its acknowledgement. */
export async function deliver(deps: ApiDeps, taskId: string, envelope: ControlEnvelope): Promise<void> {
  const h = headers();
  injectTraceContext((key, value) => h.set(key, value));
  let data: Uint8Array;
  try {
    const msg = await deps.bus.nc.request(controlSubject(taskId), encoder.encode(JSON.stringify(envelope)), {
      timeout: deps.settings.controlReplyTimeoutMs,
      headers: h,
    });
    data = msg.data;
  } catch (error) {
    const kind = requestFailure(error);
    if (kind === 'no_responders') throw new ServiceError('not_found', 'run has no live inbox', { cause: error });
    if (kind === 'timeout') {
      throw new ServiceError(
        'timeout',
        `the run inbox did not acknowledge within ${deps.settings.controlReplyTimeoutMs} ms`,
        {
          cause: error,
        },
      );
    }
    throw new ServiceError('unavailable', 'the control could not be delivered', { cause: error });
  }
  readReply(data);
}

interface ControlBody {
  readonly payload?: Record<string, unknown>;
  readonly event_id?: string;
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
function createControlHandler(deps: ApiDeps, control: string, minimum: SteeringTier): RpcHandler {
  return async ({ identity, body }): Promise<ControlResponse> => {
    const target = reconcileIdentity(control, identity, identityOf(body));
    const taskId = target.run;
    if (taskId === undefined) throw new ServiceError('invalid_request', 'identity.run (the task id) is mandatory');
    const task = await deps.tasks.getTask(taskId);
    const tier = authorizeControl(identity, task, { name: control, minimum });
    const request = body as ControlBody;
    const envelope: ControlEnvelope = {
      method: control,
      payload: await pinnedPayload(deps, control, taskId, request.payload ?? {}),
      event_id: request.event_id ?? randomUUID(),
      caller: callerOf(identity),
      caller_tier: tier,
    };
    await deliver(deps, taskId, envelope);
    return { accepted: true, method: control, protocol_version: PROTOCOL_VERSION };
  };
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
