import { GOVERNANCE_TENANT_BUDGET } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { requireCallerTenant } from './access.ts';
import type { GovernanceContext } from './context.ts';
import { governancePosture } from './posture-view.ts';

const ENDPOINT = GOVERNANCE_TENANT_BUDGET;

/**
 * `_governance.tenant_budget {tenant}` → `{tier, budgets, spend, overrides}`:
 * what governs the tenant's runs, as governance.posture reads it (behind
 * agents.governance): the default tier, each tier's budget usage, the
 * current spend windows and the tenant's overrides.
 */
export function tenantBudgetHandler(ctx: GovernanceContext): InternalHandler {
  return serveInternal(ENDPOINT, async ({ identity, body: request }) => {
    requireCallerTenant(identity, request.tenant, ENDPOINT.name);
    const posture = await governancePosture(ctx, request.tenant);
    const view = posture as typeof posture & { spend?: unknown };
    return {
      tier: posture.default_tier,
      budgets: posture.budgets as Record<string, unknown>[],
      spend: (Array.isArray(view.spend) ? view.spend : []) as Record<string, unknown>[],
      overrides: (posture.overrides ?? {}) as Record<string, unknown>,
    };
  });
}
