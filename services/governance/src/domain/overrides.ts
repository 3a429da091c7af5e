import type { LlmOverrides, LlmOverridesView } from '@ars/contracts';

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
export interface OverridesPatch {
  readonly set: Partial<LlmOverridesView>;
  readonly clear: readonly OverrideMember[];
  /** Members the request named (set or cleared): the event's Set* flags. */
  readonly touched: ReadonlySet<OverrideMember>;
}

/** Splits an overrides write: a value sets a member, `null` clears it, absent leaves it. */
export function splitOverrides(write: LlmOverrides): OverridesPatch {
  const set: Record<string, unknown> = {};
  const clear: OverrideMember[] = [];
  const touched = new Set<OverrideMember>();
  for (const member of OVERRIDE_MEMBERS) {
    const value = write[member];
    if (value === undefined) continue;
    touched.add(member);
    if (value === null) clear.push(member);
    else set[member] = value;
  }
  return { set: set as Partial<LlmOverridesView>, clear, touched };
}

/** The stored view after applying `patch` to `current` (pure mirror of the store update). */
export function applyOverrides(current: LlmOverridesView, patch: OverridesPatch): LlmOverridesView {
  const next: Record<string, unknown> = { ...current, ...patch.set };
  for (const member of patch.clear) delete next[member];
  return next as LlmOverridesView;
}
