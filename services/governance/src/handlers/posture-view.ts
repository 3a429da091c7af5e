import { LLM_PROVIDER_KINDS, PROTOCOL_VERSION } from '@ars/contracts';
import type { GovernancePostureResponse, GovernanceTier, LLMPostureResponse } from '@ars/contracts';
import { fromUsd } from '../domain/currency.ts';
import { periodStart } from '../domain/periods.ts';
import { defaultFailoverChain } from '../domain/posture.ts';
import type { Posture } from '../domain/posture.ts';
import { availableTokens, refillBucket } from '../domain/token-bucket.ts';
import type { SpendWindow } from '../store/spend.repository.ts';
import type { GovernanceContext } from './context.ts';

/**
 * The posture reads, built from live figures: the stored posture, the
 * tenant's spend windows, bucket levels refilled to now, overrides, key
 * fingerprints and provider failures.
 */

function budgetUsage(ctx: GovernanceContext, tier: GovernanceTier, windows: readonly SpendWindow[], nowMs: number) {
  const budget = tier.budget;
  if (budget === undefined) return undefined;
  const start = periodStart(budget.period, nowMs);
  const window = windows.find((w) => w.tier === tier.name && w.period === budget.period);
  const spentUsd = window?.spent_usd ?? 0;
  const converted = fromUsd(spentUsd, budget.currency, ctx.rates);
  return {
    tier: tier.name,
    spent: converted ?? spentUsd,
    ceiling: budget.ceiling,
    currency: budget.currency,
    period: budget.period,
    period_start: start,
    spent_usd: spentUsd,
    remaining: Math.max(0, budget.ceiling - (converted ?? spentUsd)),
    exceeded: (converted ?? spentUsd) >= budget.ceiling,
    calls: window?.calls ?? 0,
    ...(converted === undefined ? { rate_missing: true } : {}),
  };
}

async function rateLimitBuckets(ctx: GovernanceContext, posture: Posture, tenant: string, nowMs: number) {
  const buckets = await ctx.repos.buckets.list(tenant);
  return buckets.flatMap((bucket) => {
    const limit = posture.tiers.find((t) => t.name === bucket.tier)?.rate_limit;
    if (limit === undefined) return [];
    const state = refillBucket(bucket.state, limit, nowMs);
    return [
      {
        tier: bucket.tier,
        model: bucket.model,
        capacity: limit.capacity,
        available: availableTokens(state),
        level: state.level,
        refill_tokens: limit.refill_tokens,
        refill_every_ms: limit.refill_every_ms,
        unit: limit.unit,
        on_limit: limit.on_limit,
        updated_at: bucket.updated_at,
      },
    ];
  });
}

/** governance.posture of `tenant`. */
export async function governancePosture(ctx: GovernanceContext, tenant: string): Promise<GovernancePostureResponse> {
  const nowMs = ctx.now();
  const [posture, windows, overrides, keys] = await Promise.all([
    ctx.repos.posture.get(),
    ctx.repos.spend.currentForTenant(tenant, nowMs),
    ctx.repos.overrides.get(tenant),
    ctx.repos.keys.list(tenant),
  ]);
  const budgets = posture.tiers.flatMap((tier) => budgetUsage(ctx, tier, windows, nowMs) ?? []);
  return {
    tenant,
    default_tier: posture.default_tier,
    tiers: [...posture.tiers],
    budgets,
    overrides: overrides.overrides,
    spend: windows,
    rate_limits: await rateLimitBuckets(ctx, posture, tenant, nowMs),
    provider_keys: keys.map(({ provider, fingerprint, rotated_at }) => ({ provider, fingerprint, rotated_at })),
    failover_order: defaultFailoverChain(posture).map((p) => p.name),
    ...(posture.updated_at === undefined ? {} : { updated_at: posture.updated_at }),
    protocol_version: PROTOCOL_VERSION,
  };
}

interface ProviderEntry {
  name: string;
  kind: string;
  models: Set<string>;
  tiers: string[];
}

function providersOfPosture(posture: Posture): Map<string, ProviderEntry> {
  const providers = new Map<string, ProviderEntry>();
  for (const tier of posture.tiers) {
    for (const provider of tier.failover ?? []) {
      const entry = providers.get(provider.name) ?? {
        name: provider.name,
        kind: provider.kind,
        models: new Set<string>(),
        tiers: [],
      };
      if (provider.model !== undefined) entry.models.add(provider.model);
      entry.tiers.push(tier.name);
      providers.set(provider.name, entry);
    }
  }
  return providers;
}

function kindOfName(name: string): string {
  return (LLM_PROVIDER_KINDS as readonly string[]).includes(name) ? name : 'unknown';
}

/** llm.posture of `tenant`. */
export async function llmPosture(ctx: GovernanceContext, tenant: string): Promise<LLMPostureResponse> {
  const nowMs = ctx.now();
  const [posture, keys, failures] = await Promise.all([
    ctx.repos.posture.get(),
    ctx.repos.keys.list(tenant),
    ctx.repos.health.list(tenant),
  ]);
  const entries = providersOfPosture(posture);
  for (const key of keys) {
    if (!entries.has(key.provider)) {
      entries.set(key.provider, { name: key.provider, kind: kindOfName(key.provider), models: new Set(), tiers: [] });
    }
  }
  const providers = [...entries.values()].map((entry) => {
    const key = keys.find((k) => k.provider === entry.name);
    const failure = failures.find((f) => f.provider === entry.name);
    const recent =
      failure !== undefined &&
      ctx.healthWindowMs > 0 &&
      nowMs - Date.parse(failure.last_failure_at) < ctx.healthWindowMs;
    return {
      name: entry.name,
      kind: entry.kind,
      models: [...entry.models],
      tiers: entry.tiers,
      ...(key === undefined ? {} : { key_fingerprint: key.fingerprint, key_rotated_at: key.rotated_at }),
      healthy: !recent,
      failures: failure?.failures ?? 0,
      ...(failure === undefined ? {} : { last_failure_at: failure.last_failure_at }),
    };
  });
  const chain = defaultFailoverChain(posture).map((p) => p.name);
  return {
    tenant,
    providers,
    failover_order: chain,
    ...(chain[0] === undefined ? {} : { default_provider: chain[0] }),
    default_tier: posture.default_tier,
    tier_failover: posture.tiers.map((t) => ({ tier: t.name, failover_order: (t.failover ?? []).map((p) => p.name) })),
    protocol_version: PROTOCOL_VERSION,
  };
}
