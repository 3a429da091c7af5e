import { MEMORY_TENANT_USAGE, SCOPES, ServiceError } from '@ars/contracts';
import type { MemoryTierUsage } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import type { MemoryDeps } from '../handlers/deps.ts';

/** Most items one usage read counts (the figures are then lower bounds). */
export const MAX_USAGE_ITEMS = 10_000;

const TIERS = ['tenant', 'user', 'session'] as const;

/**
 * `_memory.tenant_usage {tenant}` → `{item_count, size_bytes, health, tiers}`:
 * the size of a tenant's memory (what its agents' runs read), by tier, and
 * the memory service's health (behind agents.memory). Only the caller's own
 * tenant, unless the caller holds admin (403 `scope_mismatch`).
 */
export function createTenantUsageHandler(deps: MemoryDeps): InternalHandler {
  return serveInternal(MEMORY_TENANT_USAGE, async ({ identity, body }) => {
    if (body.tenant !== identity.tenant && !identity.scopes.includes(SCOPES.admin)) {
      throw new ServiceError('scope_mismatch', `${MEMORY_TENANT_USAGE.name}: the body tenant is not the caller's`);
    }
    const [records, assessment] = await Promise.all([
      deps.items.all({ kind: 'tenants', tenantIds: [body.tenant] }, MAX_USAGE_ITEMS),
      deps.health.check(),
    ]);
    const tiers: MemoryTierUsage[] = TIERS.map((tier) => ({ tier, item_count: 0, size_bytes: 0 }));
    for (const record of records) {
      const usage = tiers.find((t) => t.tier === record.tier);
      if (usage === undefined) continue;
      usage.item_count += 1;
      usage.size_bytes += record.size_bytes;
    }
    return {
      item_count: records.length,
      size_bytes: records.reduce((sum, r) => sum + r.size_bytes, 0),
      health: assessment.health,
      tiers,
    };
  });
}
