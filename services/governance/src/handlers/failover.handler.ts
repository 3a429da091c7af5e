import { GOVERNANCE_FAILOVER } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { nextProvider, remainingHops } from '../domain/failover.ts';
import { resolveTier } from '../domain/posture.ts';
import { requireCallerTenant } from './access.ts';
import type { GovernanceContext } from './context.ts';
import { publishEvents } from './events.ts';

const ENDPOINT = GOVERNANCE_FAILOVER;

/** `_governance.failover`: see `GovernanceFailoverRequest` of `@ars/contracts`. */
export function failoverHandler(ctx: GovernanceContext): InternalHandler {
  return serveInternal(ENDPOINT, async ({ identity, body: request }) => {
    const tenant = request.identity.tenant;
    requireCallerTenant(identity, tenant, ENDPOINT.name);
    const { tier } = resolveTier(await ctx.repos.posture.get(), request.tier);
    const chain = tier.failover ?? [];
    const at = new Date(ctx.now()).toISOString();
    await ctx.repos.health.recordFailure(tenant, request.from_provider, request.reason, at);
    const next = nextProvider(chain, request.from_provider, request.hop_index);
    ctx.logger.info(
      {
        tenant,
        run: request.identity.run,
        from: request.from_provider,
        to: next?.name ?? null,
        hop: request.hop_index,
      },
      'provider failover',
    );
    if (next !== undefined) {
      await publishEvents(ctx, request.identity, [
        {
          type: 'governance.failover',
          payload: {
            Identity: request.identity,
            FromProvider: request.from_provider,
            ToProvider: next.name,
            HopIndex: request.hop_index,
            AccumCostUSD: request.accumulated_cost,
            Reason: request.reason,
          },
        },
      ]);
    }
    return { provider: next ?? null, hop_index: request.hop_index, remaining_hops: remainingHops(chain, next) };
  });
}
