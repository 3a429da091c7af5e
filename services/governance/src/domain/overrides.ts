import type { LlmOverrides, LlmOverridesView } from '@ars/contracts';
import { applyPatch, splitPatch } from '@ars/service-kit';
import type { MemberPatch } from '@ars/service-kit';

/** The members of tenant LLM overrides, in the order of the event's Set* flags. */
export const OVERRIDE_MEMBERS = [
  'model',
  'extra_instructions',
  'temperature',
  'max_tokens',
  'reasoning_effort',
] as const;

/** One override member. */
export type OverrideMember = (typeof OVERRIDE_MEMBERS)[number];

/** A write split into members to set and members to clear (`null`); absent members are in neither. */
export type OverridesPatch = MemberPatch<LlmOverrides, OverrideMember>;

/** Splits an overrides write: a value sets a member, `null` clears it, absent leaves it. */
export function splitOverrides(write: LlmOverrides): OverridesPatch {
  return splitPatch(write, OVERRIDE_MEMBERS);
}

/** The stored view after applying `patch` to `current` (pure mirror of the store update). */
export function applyOverrides(current: LlmOverridesView, patch: OverridesPatch): LlmOverridesView {
  return applyPatch(current, patch);
}
