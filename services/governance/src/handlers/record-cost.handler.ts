import type { RpcHandler } from '@ars/bus';
import { fromUsd } from '../domain/currency.ts';
import { resolveTier } from '../domain/posture.ts';
import type { Posture } from '../domain/posture.ts';
import { INTERNAL_ENDPOINTS, RecordCostRequest } from '../internal-api.ts';
import type { RecordCostResponse } from '../internal-api.ts';
import { requireCallerTenant } from './access.ts';
import type { GovernanceContext } from './context.ts';
import { parseInternalBody } from './internal-body.ts';

const ENDPOINT = INTERNAL_ENDPOINTS.recordCost;

/**
 * Adds one call's cost to the tenant's spend in its tier (once per
 * `call_id`): what `_governance.record_cost` does, and what
 * `_governance.admit_llm_call` does first with its `record_cost`.
 */
export async function recordCallCost(
  ctx: GovernanceContext,
  posture: Posture,
  request: RecordCostRequest,
): Promise<RecordCostResponse> {
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

/** `_governance.record_cost`: see {@link RecordCostRequest}. */
export function recordCostHandler(ctx: GovernanceContext): RpcHandler {
  return async ({ identity, body }): Promise<RecordCostResponse> => {
    const request = parseInternalBody(RecordCostRequest, ENDPOINT, body);
    requireCallerTenant(identity, request.identity.tenant, ENDPOINT);
    return recordCallCost(ctx, await ctx.repos.posture.get(), request);
  };
}
