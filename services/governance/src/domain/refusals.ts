import { ServiceError } from '@ars/contracts';
import type { ErrorCode } from '@ars/contracts';

/**
 * Why governance refused an LLM call. Each reason is also the `ErrorCode` the
 * run fails with (`task.failed`). On the wire the refusal is a ServiceError
 * whose `code` is the catalogue code below and whose `message` starts with
 * `<reason>: ` — the run engine reads the reason from that prefix.
 */
export const REFUSAL_REASONS = {
  /** The tier's budget for the current period is spent. Not retryable within the period. */
  budget_exceeded: 'rate_limited',
  /** The tier's token bucket is short (`fail` policy, or a wait above `max_wait_ms`). Retryable. */
  rate_limited: 'rate_limited',
  /** `requested_max_tokens` above the tier's cap under the `refuse` policy. */
  max_tokens_exceeded: 'invalid_request',
  /** The model is not among the tier's `models`. */
  model_not_allowed: 'invalid_request',
} as const satisfies Record<string, ErrorCode>;

/** One of {@link REFUSAL_REASONS}. */
export type RefusalReason = keyof typeof REFUSAL_REASONS;

/** The refusal as thrown by `_governance.admit_llm_call`. */
export function refusal(reason: RefusalReason, detail: string): ServiceError {
  return new ServiceError(REFUSAL_REASONS[reason], `${reason}: ${detail}`, {
    retryable: reason === 'rate_limited',
  });
}

/** The reason of a refusal message, or undefined for any other message. */
export function refusalReasonOf(message: string): RefusalReason | undefined {
  const prefix = /^([a-z_]+): /.exec(message)?.[1];
  return prefix !== undefined && Object.hasOwn(REFUSAL_REASONS, prefix) ? (prefix as RefusalReason) : undefined;
}
