import type { RunOverrides, RunOverridesView } from '@ars/contracts';
import { applyPatch, contentHash, splitPatch } from '@ars/service-kit';
import type { MemberPatch } from '@ars/service-kit';
import type { EffectiveConfigRecord } from './agent-config.ts';

/**
 * Run overrides (`runs.set_overrides`): per (tenant, user, session) LLM
 * settings for the session's later runs, the last layer of a run's effective
 * configuration. Pure rules: how a write patches the stored overrides and
 * how they apply to a resolved configuration.
 *
 * - `model`, `temperature`, `max_tokens`, `reasoning_effort` replace the
 *   matching `llm_params` member;
 * - `system_prompt` replaces the prompt layers with one layer
 *   `run:system_prompt`, keeping the session's user prompt after it (the
 *   user's own words for this session outrank neither nor are dropped);
 *   extra system blocks (tenant instructions, skills) stay;
 * - `extra_instructions` is appended as extra system block `run:extra_instructions`.
 */

/** The members, in the order of the `runs.overrides_set` Set* flags. */
export const RUN_OVERRIDE_MEMBERS = [
  'reasoning_effort',
  'temperature',
  'max_tokens',
  'system_prompt',
  'extra_instructions',
  'model',
] as const;
export type RunOverrideMember = (typeof RUN_OVERRIDE_MEMBERS)[number];

/** The prompt layer a `system_prompt` override becomes. */
export const RUN_PROMPT_LAYER = 'run:system_prompt';
/** The extra system block an `extra_instructions` override becomes. */
export const RUN_INSTRUCTIONS_BLOCK = 'run:extra_instructions';
/** agent-registry's name for the session user prompt layer (kept under a `system_prompt` override). */
const SESSION_PROMPT_LAYER = 'session:user_prompt';
const LLM_PARAM_MEMBERS = ['model', 'temperature', 'max_tokens', 'reasoning_effort'] as const;

/** A write split into members to set and to clear (`null`); absent members are in neither. */
export type RunOverridesPatch = MemberPatch<RunOverrides, RunOverrideMember>;

/** Splits a write: a value sets a member, `null` clears it, absent leaves it. */
export function splitRunOverrides(write: RunOverrides): RunOverridesPatch {
  return splitPatch(write, RUN_OVERRIDE_MEMBERS);
}

/** The stored overrides after `patch`. */
export function patchRunOverrides(current: RunOverridesView, patch: RunOverridesPatch): RunOverridesView {
  return applyPatch(current, patch);
}

interface Named {
  readonly name?: string;
  readonly text: string;
}

/** Applies the session's run overrides as the last layer `run_overrides` (recorded even when empty). */
export function applyRunOverrides(record: EffectiveConfigRecord, overrides: RunOverridesView): EffectiveConfigRecord {
  const config: Record<string, unknown> = { ...record.config };
  const applied: string[] = [];
  const params: Record<string, unknown> = { ...(config.llm_params as Record<string, unknown> | undefined) };
  for (const member of LLM_PARAM_MEMBERS) {
    if (overrides[member] === undefined) continue;
    params[member] = overrides[member];
    applied.push(`llm_params.${member}`);
  }
  if (applied.length > 0) config.llm_params = params;
  if (overrides.system_prompt !== undefined) {
    const session = ((config.prompt_layers as Named[] | undefined) ?? []).filter(
      (l) => l.name === SESSION_PROMPT_LAYER,
    );
    config.prompt_layers = [{ name: RUN_PROMPT_LAYER, text: overrides.system_prompt }, ...session];
    applied.push('prompt_layers');
  }
  if (overrides.extra_instructions !== undefined && overrides.extra_instructions !== '') {
    const blocks = (config.extra_system_blocks as Named[] | undefined) ?? [];
    config.extra_system_blocks = [...blocks, { name: RUN_INSTRUCTIONS_BLOCK, text: overrides.extra_instructions }];
    applied.push('extra_system_blocks');
  }
  const layers = [...record.layers, { layer: 'run_overrides', applied_keys: applied }];
  if (applied.length === 0) return { ...record, layers };
  return {
    ...record,
    config,
    layers,
    content_hash: contentHash({ config, source_disables: record.source_disables }),
  };
}
