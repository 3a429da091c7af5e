import type { FailoverProvider, GovernanceTier } from '@ars/contracts';

/**
 * The runtime-wide governance posture: the tiers and which one applies when
 * a call names none. One document, written by governance.set_posture.
 */
export interface Posture {
  readonly default_tier: string;
  readonly tiers: readonly GovernanceTier[];
  /** Absent while the built-in posture applies. */
  readonly updated_at?: string;
}

/** The name of the built-in tier. */
export const BUILTIN_TIER = 'default';

/** What applies before any governance.set_posture: one tier without budget, cap, limit or failover chain. */
export const BUILTIN_POSTURE: Posture = Object.freeze({
  default_tier: BUILTIN_TIER,
  tiers: Object.freeze([Object.freeze({ name: BUILTIN_TIER, max_tokens_policy: 'clip' as const })]),
});

/** The tier a call falls under. */
export interface ResolvedTier {
  readonly tier: GovernanceTier;
  /** True when the call named a tier the posture no longer has, and got the default. */
  readonly fellBack: boolean;
}

/**
 * The tier named `name`, or the default tier when `name` is absent or no
 * longer exists (a posture change must not break runs configured before it).
 */
export function resolveTier(posture: Posture, name: string | undefined): ResolvedTier {
  const named = name === undefined ? undefined : posture.tiers.find((t) => t.name === name);
  if (named !== undefined) return { tier: named, fellBack: false };
  const fallback = posture.tiers.find((t) => t.name === posture.default_tier) ?? posture.tiers[0];
  if (fallback === undefined) return resolveTier(BUILTIN_POSTURE, undefined);
  return { tier: fallback, fellBack: name !== undefined };
}

/** The names of the posture's tiers, in order. */
export function tierNames(posture: Posture): string[] {
  return posture.tiers.map((t) => t.name);
}

/** The default tier's failover chain (empty when it has none). */
export function defaultFailoverChain(posture: Posture): readonly FailoverProvider[] {
  return resolveTier(posture, undefined).tier.failover ?? [];
}
