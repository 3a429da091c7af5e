import { ServiceError, GovernanceSetPostureRequest } from '@ars/contracts';
import type { GovernanceSetPostureResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { CurrencyRates } from '../domain/currency.ts';
import { tierNames } from '../domain/posture.ts';
import { requireAdmin, requireOwnIdentity, typedMethod } from '@ars/service-kit';
import { actorOf } from './access.ts';
import type { GovernanceContext } from './context.ts';
import { publishEvents } from './events.ts';

const METHOD = 'governance.set_posture';

/** Costs are recorded in USD: a budget currency needs a configured rate. */
function checkCurrencies(request: GovernanceSetPostureRequest, rates: CurrencyRates): void {
  request.tiers.forEach((tier, index) => {
    const currency = tier.budget?.currency;
    if (currency !== undefined && rates[currency] === undefined) {
      throw new ServiceError(
        'invalid_request',
        `invalid ${METHOD} request: tiers.${index}.budget.currency: ${currency} has no rate in GOVERNANCE_CURRENCY_RATES (costs are recorded in USD)`,
      );
    }
  });
}

/**
 * governance.set_posture (M, A): replaces the runtime-wide tiers and default
 * tier; publishes `governance.posture_set` with the tiers before and after.
 */
export function setPostureHandler(ctx: GovernanceContext): RpcHandler {
  return typedMethod(
    GovernanceSetPostureRequest,
    async ({ identity, body: request }): Promise<GovernanceSetPostureResponse> => {
      requireAdmin(METHOD, identity);
      requireOwnIdentity(METHOD, identity, request.identity);
      checkCurrencies(request, ctx.rates);
      const at = new Date(ctx.now()).toISOString();
      const actor = actorOf(identity);
      const { before, after } = await ctx.repos.posture.replace(
        { default_tier: request.default_tier, tiers: request.tiers },
        actor,
        at,
      );
      ctx.logger.info({ defaultTier: after.default_tier, tiers: after.tiers.length }, 'governance posture set');
      await publishEvents(ctx, actor, [
        {
          type: 'governance.posture_set',
          payload: {
            Actor: actor,
            DefaultTierBefore: before.default_tier,
            DefaultTierAfter: after.default_tier,
            TierCountBefore: before.tiers.length,
            TierCountAfter: after.tiers.length,
            TiersBefore: tierNames(before),
            TiersAfter: tierNames(after),
            OccurredAt: at,
          },
        },
      ]);
      return { default_tier: after.default_tier, tiers: [...after.tiers], updated_at: at };
    },
  );
}
