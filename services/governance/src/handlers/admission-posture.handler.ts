import { GOVERNANCE_ADMISSION_POSTURE } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { admitsEveryCall } from '../domain/admission.ts';
import { resolveTier } from '../domain/posture.ts';
import type { GovernanceContext } from './context.ts';

const ENDPOINT = GOVERNANCE_ADMISSION_POSTURE;

/**
 * `_governance.admission_posture`: which tiers admit every call (see
 * `GovernanceAdmissionPostureRequest` of `@ars/contracts`). The posture is
 * runtime-wide, so any caller may read this digest of it: it names tiers
 * and nothing of their settings.
 */
export function admissionPostureHandler(ctx: GovernanceContext): InternalHandler {
  return serveInternal(ENDPOINT, async () => {
    const posture = await ctx.repos.posture.get();
    const fallback = resolveTier(posture, undefined).tier;
    // The built-in tier applies when the posture has none to fall back on: it is listed too.
    const tiers = posture.tiers.some((tier) => tier.name === fallback.name)
      ? posture.tiers
      : [...posture.tiers, fallback];
    return {
      default_tier: fallback.name,
      tiers: tiers.map((tier) => ({ name: tier.name, open: admitsEveryCall(tier) })),
      ...(posture.updated_at === undefined ? {} : { updated_at: posture.updated_at }),
    };
  });
}
