import type { RpcHandler } from '@ars/bus';
import { EffectiveOverridesRequest, INTERNAL_ENDPOINTS } from '../internal-api.ts';
import type { EffectiveOverridesResponse } from '../internal-api.ts';
import { requireCallerTenant } from './access.ts';
import type { GovernanceContext } from './context.ts';
import { parseInternalBody } from './internal-body.ts';

const ENDPOINT = INTERNAL_ENDPOINTS.effectiveOverrides;

/** `_governance.effective_overrides`: see {@link EffectiveOverridesRequest}. */
export function effectiveOverridesHandler(ctx: GovernanceContext): RpcHandler {
  return async ({ identity, body }): Promise<EffectiveOverridesResponse> => {
    const request = parseInternalBody(EffectiveOverridesRequest, ENDPOINT, body);
    requireCallerTenant(identity, request.tenant, ENDPOINT);
    return { ...(await ctx.repos.overrides.get(request.tenant)) };
  };
}
