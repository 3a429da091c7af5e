import { setTimeout as sleep } from 'node:timers/promises';
import { isServiceError, parseInternalReply, parseInternalRequest } from '@ars/contracts';
import type {
  InternalEndpointDef,
  InternalReply,
  InternalRequest,
  ServiceError,
  VerifiedIdentity,
} from '@ars/contracts';
import type { CallOptions, RpcClient } from './rpc-client.ts';

/** What {@link callInternal} needs of an RPC client: its `call` (an `RpcClient`, or a test's fake). */
export type InternalCaller = Pick<RpcClient, 'call'>;

/**
 * Calls an internal endpoint of the registry as `identity` and returns its
 * parsed reply. The body is checked against the endpoint's request schema
 * first: a bad one is 400 `invalid_request` and nothing is sent. A reply
 * that fails the endpoint's reply schema is `internal`. Failures are the
 * RPC client's ServiceErrors otherwise (`unavailable`, `timeout`, the
 * owner's refusal with its `reason`: read it with `refusalOf`).
 */
export async function callInternal<E extends InternalEndpointDef>(
  rpc: InternalCaller,
  endpoint: E,
  identity: VerifiedIdentity,
  body: InternalRequest<E>,
  options?: CallOptions,
): Promise<InternalReply<E>> {
  parseInternalRequest(endpoint, body);
  // The body as the caller built it goes out; the owner parses it again.
  const reply = await rpc.call(endpoint.service, endpoint.name, identity, body, options);
  return parseInternalReply(endpoint, reply);
}

/** Options of {@link callInternalWithinBudget}. */
export interface BudgetOptions {
  /** The whole call's budget, every ask and pause included, in ms. */
  readonly timeoutMs: number;
  /** Told once per call, at the first ask that found no responder (to log that the owner is waited for). */
  readonly onWait?: (error: ServiceError) => void;
}

/** The pauses between two asks of an owner with no responders: 50 ms, doubling, at most 500 ms. */
const FIRST_PAUSE_MS = 50;
const LONGEST_PAUSE_MS = 500;

/**
 * {@link callInternal}, failing closed within a budget: an owner with no
 * responders (restarting, or its subscriptions still propagating after a
 * NATS node failover) is asked again, with a growing pause, while
 * `timeoutMs` lasts; then its `unavailable` is thrown (503, retryable).
 * Each ask waits for what is left of the budget. Any other failure (a
 * timeout, a refusal, `unimplemented`) is thrown at once. A caller never
 * skips the check the endpoint makes.
 */
export async function callInternalWithinBudget<E extends InternalEndpointDef>(
  rpc: InternalCaller,
  endpoint: E,
  identity: VerifiedIdentity,
  body: InternalRequest<E>,
  options: BudgetOptions,
): Promise<InternalReply<E>> {
  const deadline = Date.now() + options.timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await callInternal(rpc, endpoint, identity, body, { timeoutMs: Math.max(1, deadline - Date.now()) });
    } catch (error) {
      const pause = Math.min(FIRST_PAUSE_MS * 2 ** attempt, LONGEST_PAUSE_MS);
      const again = isServiceError(error) && error.code === 'unavailable' && Date.now() + pause < deadline;
      if (!again) throw error;
      if (attempt === 0) options.onWait?.(error);
      await sleep(pause);
    }
  }
}
