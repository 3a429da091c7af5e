import { GOVERNANCE_EFFECTIVE_OVERRIDES } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { requireCallerTenant } from './access.ts';
import type { GovernanceContext } from './context.ts';

const ENDPOINT = GOVERNANCE_EFFECTIVE_OVERRIDES;

/** `_governance.effective_overrides`: see `GovernanceEffectiveOverridesRequest` of `@ars/contracts`. */
export function effectiveOverridesHandler(ctx: GovernanceContext): InternalHandler {
  return serveInternal(ENDPOINT, async ({ identity, body: request }) => {
    requireCallerTenant(identity, request.tenant, ENDPOINT.name);
    return { ...(await ctx.repos.overrides.get(request.tenant)) };
  });
}
