import { RuntimeInfoRequest } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { actorOf, postureTarget } from './access.ts';
import type { GovernanceContext } from './context.ts';
import { publishEvents } from './events.ts';
import { governancePosture, llmPosture } from './posture-view.ts';
import { typedMethod } from '@ars/service-kit';

/**
 * governance.posture (R, X): the tiers, the default tier, the tenant's budgets
 * and spend, rate-limit buckets, overrides, key fingerprints and the failover
 * chain. Reading another tenant's publishes `governance.posture_read_admin`.
 */
export function governancePostureHandler(ctx: GovernanceContext): RpcHandler {
  return typedMethod(RuntimeInfoRequest, async ({ identity, body: request }) => {
    const target = postureTarget(identity, request.identity, 'governance.posture');
    const view = await governancePosture(ctx, target.tenant);
    if (target.crossed) {
      await publishEvents(ctx, actorOf(identity), [
        {
          type: 'governance.posture_read_admin',
          payload: {
            Actor: actorOf(identity),
            RequestedTenant: target.tenant,
            OccurredAt: new Date(ctx.now()).toISOString(),
          },
        },
      ]);
    }
    return view;
  });
}

/**
 * llm.posture (R, X): the tenant's providers (kind, models, key fingerprint,
 * health) and the failover order. Reading another tenant's publishes
 * `llm.posture_read_admin`.
 */
export function llmPostureHandler(ctx: GovernanceContext): RpcHandler {
  return typedMethod(RuntimeInfoRequest, async ({ identity, body: request }) => {
    const target = postureTarget(identity, request.identity, 'llm.posture');
    const view = await llmPosture(ctx, target.tenant);
    if (target.crossed) {
      await publishEvents(ctx, actorOf(identity), [
        { type: 'llm.posture_read_admin', payload: { Actor: actorOf(identity), RequestedTenant: target.tenant } },
      ]);
    }
    return view;
  });
}
