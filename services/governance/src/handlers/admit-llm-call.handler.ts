import { GOVERNANCE_ADMIT_LLM_CALL, refusalOf, ServiceError } from '@ars/contracts';
import type { RateLimit } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { bucketCharge, capMaxTokens, checkBudget, checkModel, limitRate } from '../domain/admission.ts';
import type { CallContext, CheckResult, GovernanceEvent, RateResult } from '../domain/admission.ts';
import { fromUsd } from '../domain/currency.ts';
import { resolveTier } from '../domain/posture.ts';
import type { BucketKey } from '../store/bucket.repository.ts';
import { requireCallerTenant } from './access.ts';
import type { GovernanceContext } from './context.ts';
import { publishEvents } from './events.ts';
import { recordCallCost } from './record-cost.handler.ts';
import { createKeyedLock } from './keyed-lock.ts';

const ENDPOINT = GOVERNANCE_ADMIT_LLM_CALL;
/** Optimistic-concurrency attempts on one bucket before giving up (other replicas writing it). */
const MAX_BUCKET_ATTEMPTS = 16;

/** The tier's spend in its budget's current window, in the budget currency. */
async function spentInBudgetCurrency(ctx: GovernanceContext, call: CallContext, nowMs: number): Promise<number> {
  const budget = call.tier.budget;
  if (budget === undefined) return 0;
  const window = await ctx.repos.spend.current(call.identity.tenant, call.tier.name, budget.period, nowMs);
  const spent = fromUsd(window.spent_usd, budget.currency, ctx.rates);
  if (spent === undefined) {
    throw new ServiceError(
      'unavailable',
      `the budget currency ${budget.currency} of tier "${call.tier.name}" has no rate in GOVERNANCE_CURRENCY_RATES`,
    );
  }
  return spent;
}

/** Draws from the bucket with optimistic concurrency: read, decide, write if unchanged, else again. */
async function drawFromBucket(
  ctx: GovernanceContext,
  call: CallContext,
  limit: RateLimit,
  charge: number,
): Promise<RateResult> {
  const key: BucketKey = { tenant: call.identity.tenant, tier: call.tier.name, model: call.model };
  for (let attempt = 0; attempt < MAX_BUCKET_ATTEMPTS; attempt += 1) {
    const stored = await ctx.repos.buckets.get(key);
    const nowMs = ctx.now();
    const result = limitRate(call, limit, stored?.state, charge, nowMs);
    if (result.next === undefined) return result;
    if (await ctx.repos.buckets.save(key, stored?.version, result.next, new Date(nowMs).toISOString())) return result;
  }
  throw new ServiceError('unavailable', 'the rate-limit bucket is too contended; retry');
}

/** `_governance.admit_llm_call`: see `GovernanceAdmitLlmCallRequest` of `@ars/contracts` for the rules. */
export function admitLlmCallHandler(ctx: GovernanceContext): InternalHandler {
  const lock = createKeyedLock();
  return serveInternal(ENDPOINT, async ({ identity, body: request }) => {
    requireCallerTenant(identity, request.identity.tenant, ENDPOINT.name);
    const posture = await ctx.repos.posture.get();
    // The previous call's cost first: a budget it crossed refuses this call.
    const recorded =
      request.record_cost === undefined
        ? undefined
        : await recordCallCost(ctx, posture, { ...request.record_cost, identity: request.identity });
    const { tier, fellBack } = resolveTier(posture, request.tier);
    if (fellBack) ctx.logger.warn({ tier: request.tier, applied: tier.name }, 'unknown tier; the default tier applies');
    const nowMs = ctx.now();
    const call: CallContext = {
      identity: request.identity,
      tier,
      model: request.model,
      occurredAt: new Date(nowMs).toISOString(),
    };
    const events: GovernanceEvent[] = [];
    const settle = async <R extends CheckResult>(result: R): Promise<R> => {
      if (result.event !== undefined) events.push(result.event);
      if (result.refusal !== undefined) {
        await publishEvents(ctx, request.identity, events);
        ctx.logger.info(
          {
            tenant: request.identity.tenant,
            run: request.identity.run,
            tier: tier.name,
            reason: refusalOf(ENDPOINT, result.refusal),
          },
          'llm call refused',
        );
        throw result.refusal;
      }
      return result;
    };
    await settle(checkModel(call));
    await settle(checkBudget(call, await spentInBudgetCurrency(ctx, call, nowMs)));
    const capped = await settle(capMaxTokens(call, request.requested_max_tokens));
    let waitMs = 0;
    const limit = tier.rate_limit;
    if (limit !== undefined) {
      const bucketKey = JSON.stringify([call.identity.tenant, tier.name, call.model]);
      const drawn = await lock(bucketKey, () =>
        drawFromBucket(ctx, call, limit, bucketCharge(limit, capped.maxTokens)),
      );
      waitMs = (await settle(drawn)).waitMs;
    }
    await publishEvents(ctx, request.identity, events);
    return {
      allowed: true as const,
      tier: tier.name,
      model: request.model,
      max_tokens: capped.maxTokens,
      clipped: capped.clipped,
      wait_ms: waitMs,
      ...(recorded === undefined ? {} : { recorded }),
    };
  });
}
