import { ServiceError } from '@ars/contracts';
import type { SteeringTier, VerifiedIdentity } from '@ars/contracts';
import { assertSteeringAllowed } from '@ars/auth';
import { isTerminal } from './task.ts';
import type { TaskRecord } from './task.ts';

/**
 * The API-side rules of the nine steering controls, before the live inbox is
 * asked. The order is fixed so that each refusal reveals no more than the
 * caller may know:
 *
 * 1. a missing task is 404 `not_found`;
 * 2. the steering tier is derived from the verified identity only (the body
 *    `scope` is ignored) and compared with the method's minimum: 403
 *    `scope_mismatch` (another tenant's run without admin, as the Errors
 *    table lists it; another user of the same tenant has no authority;
 *    `prioritize` needs admin);
 * 3. a terminal task has no live inbox: 404 `not_found`, without asking.
 *
 * @returns the caller's tier.
 */
export function authorizeControl(
  caller: VerifiedIdentity,
  task: TaskRecord | null,
  method: { readonly name: string; readonly minimum: SteeringTier },
): SteeringTier {
  if (task === null) throw new ServiceError('not_found', 'run not found');
  const tier = assertSteeringAllowed(caller, { tenant: task.tenant, user: task.user }, method.minimum);
  if (isTerminal(task.status)) {
    throw new ServiceError('not_found', `run has no live inbox: it already ended (${task.status})`);
  }
  return tier;
}

/** What the API side sends to a run's control inbox (`controlSubject(task_id)`). */
export interface ControlEnvelope {
  /** The control's method name (`cancel`, …, `prioritize`). */
  readonly method: string;
  /** The validated method-specific payload; `{}` when none was sent. */
  readonly payload: Record<string, unknown>;
  /** The control's idempotency key: the request's `event_id`, or a fresh one. */
  readonly event_id: string;
  /** Who sent it, as verified (the inbox names them in `control.*` events). */
  readonly caller: VerifiedIdentity;
  /** The tier the API side derived. */
  readonly caller_tier: SteeringTier;
}
