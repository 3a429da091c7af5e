import type { GovernanceTier, IdentityQuad, RateLimit } from '@ars/contracts';
import type { ServiceError } from '@ars/contracts';
import { refusal } from './refusals.ts';
import { takeTokens } from './token-bucket.ts';
import type { BucketState } from './token-bucket.ts';

/**
 * The admission rules of one LLM call, as pure functions. Each returns the
 * event to publish (if any) and the refusal to throw (if any); the handler
 * does the I/O. Checked in this order: model, budget, max tokens, rate limit.
 */

/** An event to publish: its registry type and payload. */
export interface GovernanceEvent {
  readonly type: string;
  readonly payload: Readonly<Record<string, unknown>>;
}

/** What every check knows about the call. */
export interface CallContext {
  readonly identity: IdentityQuad;
  readonly tier: GovernanceTier;
  readonly model: string;
  /** RFC 3339 instant of the decision (`OccurredAt`). */
  readonly occurredAt: string;
}

/** The outcome of one check: an event, a refusal, both or neither. */
export interface CheckResult {
  readonly event?: GovernanceEvent;
  readonly refusal?: ServiceError;
}

/** Nanoseconds per millisecond (`dur` is integer nanoseconds). */
const NS_PER_MS = 1_000_000;

/**
 * True when no check below can refuse, clip, delay or report a call of the
 * tier: no models list, budget, max-tokens cap or rate limit. The engine
 * admits calls of such a tier without asking (`_governance.admission_posture`),
 * so a check added here must make its tier not open.
 */
export function admitsEveryCall(tier: GovernanceTier): boolean {
  return (
    tier.models === undefined &&
    tier.budget === undefined &&
    tier.max_tokens === undefined &&
    tier.rate_limit === undefined
  );
}

/** Refuses a model outside the tier's `models` list (absent list: any model). */
export function checkModel(call: CallContext): CheckResult {
  const allowed = call.tier.models;
  if (allowed === undefined || allowed.includes(call.model)) return {};
  return {
    refusal: refusal('model_not_allowed', `model "${call.model}" is not allowed in tier "${call.tier.name}"`),
  };
}

/**
 * Refuses the call once the tier's spend in the current period, expressed in
 * the budget's currency, has reached the ceiling.
 */
export function checkBudget(call: CallContext, spent: number): CheckResult {
  const budget = call.tier.budget;
  if (budget === undefined || spent < budget.ceiling) return {};
  return {
    event: {
      type: 'governance.budget_exceeded',
      payload: {
        Identity: call.identity,
        Tier: call.tier.name,
        Model: call.model,
        TotalCost: spent,
        Ceiling: budget.ceiling,
        Currency: budget.currency,
        OccurredAt: call.occurredAt,
      },
    },
    refusal: refusal(
      'budget_exceeded',
      `tier "${call.tier.name}" spent ${Number(spent.toFixed(6))} of its ${budget.ceiling} ${budget.currency} ${budget.period} budget`,
    ),
  };
}

/** The result of {@link capMaxTokens}. */
export interface CapResult extends CheckResult {
  /** The max tokens the call may use (clipped to the cap under `clip`). */
  readonly maxTokens: number;
  readonly clipped: boolean;
}

/** Applies the tier's max-tokens cap: within it unchanged; above it clipped or refused per policy, with an event. */
export function capMaxTokens(call: CallContext, requested: number): CapResult {
  const cap = call.tier.max_tokens;
  if (cap === undefined || requested <= cap) return { maxTokens: requested, clipped: false };
  const event: GovernanceEvent = {
    type: 'governance.maxtokens_exceeded',
    payload: {
      Identity: call.identity,
      Tier: call.tier.name,
      Model: call.model,
      Requested: requested,
      Cap: cap,
      OccurredAt: call.occurredAt,
    },
  };
  if (call.tier.max_tokens_policy === 'refuse') {
    const detail = `requested ${requested} max tokens, above the cap of ${cap} in tier "${call.tier.name}"`;
    return { maxTokens: requested, clipped: false, event, refusal: refusal('max_tokens_exceeded', detail) };
  }
  return { maxTokens: cap, clipped: true, event };
}

/** The result of {@link limitRate}. */
export interface RateResult extends CheckResult {
  /** The bucket to persist; undefined when nothing changes (refused). */
  readonly next?: BucketState;
  readonly waitMs: number;
}

/** Tokens one call draws: 1 per call, or its admitted max tokens. */
export function bucketCharge(limit: RateLimit, maxTokens: number): number {
  return limit.unit === 'tokens' ? maxTokens : 1;
}

function rateLimitedEvent(call: CallContext, limit: RateLimit, requested: number, available: number): GovernanceEvent {
  return {
    type: 'governance.rate_limited',
    payload: {
      Identity: call.identity,
      Tier: call.tier.name,
      Model: call.model,
      Requested: requested,
      Available: available,
      Capacity: limit.capacity,
      RefillTokens: limit.refill_tokens,
      RefillEvery: limit.refill_every_ms * NS_PER_MS,
      OccurredAt: call.occurredAt,
    },
  };
}

/**
 * Draws from the (tenant, tier, model) bucket: granted silently; delayed
 * (`wait` policy) or refused with a `governance.rate_limited` event.
 */
export function limitRate(
  call: CallContext,
  limit: RateLimit,
  bucket: BucketState | undefined,
  requested: number,
  nowMs: number,
): RateResult {
  const taken = takeTokens(bucket, limit, requested, nowMs);
  if (taken.outcome === 'granted') return { next: taken.state, waitMs: 0 };
  const event = rateLimitedEvent(call, limit, requested, taken.available);
  if (taken.outcome === 'delayed') return { next: taken.state, waitMs: taken.wait_ms, event };
  const detail =
    taken.reason === 'over_capacity'
      ? `the call needs ${requested} tokens, more than the bucket's capacity of ${limit.capacity}`
      : `the bucket of model "${call.model}" in tier "${call.tier.name}" holds ${taken.available} of the ${requested} tokens needed; ` +
        `retry in ${taken.wait_ms} ms`;
  return { waitMs: taken.wait_ms, event, refusal: refusal('rate_limited', detail) };
}
