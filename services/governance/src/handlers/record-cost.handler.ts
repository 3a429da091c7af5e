import { GOVERNANCE_RECORD_COST } from '@ars/contracts';
import type { GovernanceRecordCostReply, GovernanceRecordCostRequest } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { fromUsd } from '../domain/currency.ts';
import { resolveTier } from '../domain/posture.ts';
import type { Posture } from '../domain/posture.ts';
import { requireCallerTenant } from './access.ts';
import type { GovernanceContext } from './context.ts';

const ENDPOINT = GOVERNANCE_RECORD_COST;

/**
 * Adds one call's cost to the tenant's spend in its tier (once per
 * `call_id`): what `_governance.record_cost` does, and what
 * `_governance.admit_llm_call` does first with its `record_cost`.
 */
export async function recordCallCost(
  ctx: GovernanceContext,
  posture: Posture,
  request: GovernanceRecordCostRequest,
): Promise<GovernanceRecordCostReply> {
  const tenant = request.identity.tenant;
  const { tier } = resolveTier(posture, request.tier);
  const nowMs = ctx.now();
  const { windows, duplicate } = await ctx.repos.spend.add(tenant, tier.name, request, nowMs, request.call_id);
  const spend = windows.map(({ period, period_start, spent_usd, tokens_in, tokens_out, calls }) => ({
    period,
    period_start,
    spent_usd,
    tokens_in,
    tokens_out,
    calls,
  }));
  const budget = tier.budget;
  const window = budget === undefined ? undefined : windows.find((w) => w.period === budget.period);
  if (budget === undefined || window === undefined) return { tier: tier.name, duplicate, spend };
  const spent = fromUsd(window.spent_usd, budget.currency, ctx.rates) ?? window.spent_usd;
  if (!duplicate && spent >= budget.ceiling) {
    ctx.logger.info({ tenant, tier: tier.name, spent, ceiling: budget.ceiling }, 'budget ceiling reached');
  }
  return {
    tier: tier.name,
    duplicate,
    spend,
    budget: {
      period: budget.period,
      period_start: window.period_start,
      spent,
      ceiling: budget.ceiling,
      currency: budget.currency,
      exceeded: spent >= budget.ceiling,
    },
  };
}

/** `_governance.record_cost`: see `GovernanceRecordCostRequest` of `@ars/contracts`. */
export function recordCostHandler(ctx: GovernanceContext): InternalHandler {
  return serveInternal(ENDPOINT, async ({ identity, body: request }) => {
    requireCallerTenant(identity, request.identity.tenant, ENDPOINT.name);
    return recordCallCost(ctx, await ctx.repos.posture.get(), request);
  });
}
