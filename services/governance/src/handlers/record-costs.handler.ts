import { GOVERNANCE_RECORD_COSTS } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { resolveTier } from '../domain/posture.ts';
import { requireCallerTenant } from './access.ts';
import type { GovernanceContext } from './context.ts';

const ENDPOINT = GOVERNANCE_RECORD_COSTS;

/**
 * `_governance.record_costs`: several calls of one run, each recorded as
 * `_governance.record_cost` would (its tier resolved against the posture,
 * once per `call_id`), in one write per tier. See
 * `GovernanceRecordCostsRequest` of `@ars/contracts`.
 */
export function recordCostsHandler(ctx: GovernanceContext): InternalHandler {
  return serveInternal(ENDPOINT, async ({ identity, body: request }) => {
    const tenant = request.identity.tenant;
    requireCallerTenant(identity, tenant, ENDPOINT.name);
    const posture = await ctx.repos.posture.get();
    const calls = request.records.map((record) => ({
      tier: resolveTier(posture, record.tier).tier.name,
      amounts: { cost_usd: record.cost_usd, tokens_in: record.tokens_in, tokens_out: record.tokens_out },
      callId: record.call_id,
    }));
    return ctx.repos.spend.addCalls(tenant, calls, ctx.now());
  });
}
