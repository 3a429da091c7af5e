import { GovernanceGetTenantOverridesRequest, GovernanceSetTenantOverridesRequest } from '@ars/contracts';
import type { GovernanceGetTenantOverridesResponse, GovernanceSetTenantOverridesResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { splitOverrides } from '../domain/overrides.ts';
import { requireAdmin, requireOwnIdentity, typedMethod } from '@ars/service-kit';
import { actorOf } from './access.ts';
import type { GovernanceContext } from './context.ts';
import { publishEvents } from './events.ts';

/** governance.get_tenant_overrides (R, A): the target tenant's overrides (`tenant`, default the caller's). */
export function getTenantOverridesHandler(ctx: GovernanceContext): RpcHandler {
  const method = 'governance.get_tenant_overrides';
  return typedMethod(
    GovernanceGetTenantOverridesRequest,
    async ({ identity, body: request }): Promise<GovernanceGetTenantOverridesResponse> => {
      requireAdmin(method, identity);
      requireOwnIdentity(method, identity, request.identity);
      const current = await ctx.repos.overrides.get(request.tenant ?? identity.tenant);
      return { ...current };
    },
  );
}

/**
 * governance.set_tenant_overrides (M, A): a value sets a member, `null` clears
 * it, absent leaves it; publishes `governance.tenant_overrides_set` whose
 * Set* flags name the members the request touched and whose Model is the
 * model in force afterwards (`""` when none).
 */
export function setTenantOverridesHandler(ctx: GovernanceContext): RpcHandler {
  const method = 'governance.set_tenant_overrides';
  return typedMethod(
    GovernanceSetTenantOverridesRequest,
    async ({ identity, body: request }): Promise<GovernanceSetTenantOverridesResponse> => {
      requireAdmin(method, identity);
      requireOwnIdentity(method, identity, request.identity);
      const tenant = request.tenant ?? identity.tenant;
      const patch = splitOverrides(request.overrides);
      const at = new Date(ctx.now()).toISOString();
      const actor = actorOf(identity);
      const after = await ctx.repos.overrides.apply(tenant, patch, actor, at);
      ctx.logger.info({ tenant, members: [...patch.touched] }, 'tenant overrides set');
      await publishEvents(ctx, actor, [
        {
          type: 'governance.tenant_overrides_set',
          payload: {
            Actor: actor,
            Tenant: tenant,
            Model: after.overrides.model ?? '',
            SetModel: patch.touched.has('model'),
            SetExtraInstructions: patch.touched.has('extra_instructions'),
            SetTemperature: patch.touched.has('temperature'),
            SetMaxTokens: patch.touched.has('max_tokens'),
            SetReasoningEffort: patch.touched.has('reasoning_effort'),
            OccurredAt: at,
          },
        },
      ]);
      return after;
    },
  );
}
