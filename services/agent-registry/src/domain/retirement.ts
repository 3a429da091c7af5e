import { contentHash } from '@ars/service-kit';

/**
 * Retiring an agent configuration, in stages. The first act (`started`)
 * fences the agent: from then on `_agent.resolve` and
 * `_agent.effective_config` refuse it exactly as an unknown id, so no new run
 * starts under it, and no revision write but `set_revision` (which
 * reinstates it) is accepted. Runs already started keep the configuration
 * they resolved at their start. Then each stage releases one class of what
 * was layered on the agent; the agent's own revisions stay (audit, diff):
 *
 * - `user_variants`: every per-user variant revision of the agent;
 * - `session_settings`: session user prompts and source disables naming it;
 * - `agent_skills`: skills scoped to it.
 *
 * `completed` ends it. A retirement interrupted midway resumes from its
 * recorded stage on the next `agent_config.retire`.
 */
export const RETIREMENT_STAGES = ['user_variants', 'session_settings', 'agent_skills'] as const;
export type RetirementStage = (typeof RETIREMENT_STAGES)[number];

/** The `class` (lowercase key) of the items a stage releases. */
export const RETIREMENT_ITEM_CLASS: Readonly<Record<RetirementStage, string>> = {
  user_variants: 'user_variant_revision',
  session_settings: 'session_setting',
  agent_skills: 'skill',
};

/** The stage names on the wire: `started`, each release stage, `completed`. */
export const STARTED_STAGE = 'started';
export const COMPLETED_STAGE = 'completed';

/** The stages still to run after `stage` (the last one recorded). */
export function stagesAfter(stage: string): RetirementStage[] {
  if (stage === STARTED_STAGE) return [...RETIREMENT_STAGES];
  const at = RETIREMENT_STAGES.indexOf(stage as RetirementStage);
  return at === -1 ? [] : RETIREMENT_STAGES.slice(at + 1);
}

/**
 * The operation hash of a retirement: `sha256:` of the canonical JSON of
 * what identifies it. The same retirement always has the same hash, so
 * resumed stages publish under the same event ids.
 */
export function retirementOperationHash(input: {
  readonly tenant: string;
  readonly agent_id: string;
  readonly generation: number;
  readonly head_revision_id: string;
}): string {
  return contentHash({ op: 'agent_config.retire', ...input });
}
