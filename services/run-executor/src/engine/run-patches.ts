import type { RunOverridesView } from '@ars/contracts';
import type { LiveOverrides } from '../store/run-state.repository.ts';
import { toAgentRunConfig } from './agent-config.ts';
import { LlmCallRefused } from './governance.ts';
import type { RefusalReason } from './governance.ts';
import type { EffectiveConfigRecord } from './agent-config.ts';
import type { PreparedRun } from './run-prepare.ts';
import { applyRunOverrides, RUN_INSTRUCTIONS_BLOCK, RUN_OVERRIDE_MEMBERS } from './run-overrides.ts';
import type { RunOverrideMember } from './run-overrides.ts';
import type { RunState } from './run-state.ts';

/**
 * Mid-run patches: `runs.set_overrides` on the session of a live run. At each
 * planner-step boundary the run reads its session's overrides; when they
 * changed since it last looked (`updated_at`), the members that changed are
 * one patch, identified by that `updated_at` (what `runs.set_overrides`
 * answered): applied to the rest of the run (`task.patch_applied`) or
 * refused whole (`task.patch_rejected`; the event has only the PatchID, the
 * reason is in the log):
 *
 * - a cleared member cannot fall back mid-run, the layers under it are not
 *   kept (`cleared_mid_run`);
 * - a new `model` must be one governance admits for the run: governance is
 *   asked to admit a call of it before the patch applies, and its refusal
 *   (`model_not_allowed` when the tier does not list it, or any other
 *   admission refusal) refuses the patch, so that a patch never makes the
 *   run's next call fail. Admitted, it replaces the run's model from this
 *   step on (its context window follows the model; its output mode is
 *   looked up again); the configuration recorded at the start stays;
 * - `temperature`, `max_tokens`, `reasoning_effort` replace the run's
 *   parameters, `system_prompt` its prompt layers, `extra_instructions` its
 *   run instructions block (as at the first claim: `run-overrides.ts`).
 *
 * Either way the session keeps the overrides for its later runs. What a run
 * saw and applied is checkpointed (`live_overrides`), so a redelivered run
 * applies its patches again and decides a patch once (the events' ids are
 * fixed by the patch).
 */

/** Why a patch is refused, besides governance's refusal of its model (a {@link RefusalReason}). */
export const PATCH_REJECTIONS = {
  cleared: 'cleared_mid_run',
} as const;
export type PatchRejection = (typeof PATCH_REJECTIONS)[keyof typeof PATCH_REJECTIONS] | RefusalReason;

export type PatchDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'apply'; readonly members: RunOverridesView }
  | { readonly kind: 'reject'; readonly reason: PatchRejection; readonly members: readonly RunOverrideMember[] };

/**
 * What changed between the overrides a run saw and the session's now, and
 * whether it may apply as far as the overrides tell (a new model is then
 * checked with governance: {@link applyPendingPatch}).
 */
export function decidePatch(seen: RunOverridesView, now: RunOverridesView): PatchDecision {
  const changed = RUN_OVERRIDE_MEMBERS.filter((m) => JSON.stringify(seen[m]) !== JSON.stringify(now[m]));
  if (changed.length === 0) return { kind: 'none' };
  if (changed.some((m) => now[m] === undefined)) {
    return { kind: 'reject', reason: PATCH_REJECTIONS.cleared, members: changed };
  }
  const members: Record<string, unknown> = {};
  for (const m of changed) members[m] = now[m];
  return { kind: 'apply', members: members as RunOverridesView };
}

/** `record` (the run's configuration) with the patched members replacing what the run resolved. */
export function applyPatches(record: EffectiveConfigRecord, applied: RunOverridesView): EffectiveConfigRecord {
  let base = record;
  if (applied.extra_instructions !== undefined) {
    const blocks = (record.config.extra_system_blocks as { name?: string }[] | undefined) ?? [];
    const kept = blocks.filter((b) => b.name !== RUN_INSTRUCTIONS_BLOCK);
    base = { ...record, config: { ...record.config, extra_system_blocks: kept } };
  }
  return applyRunOverrides(base, applied);
}

/** The fixed event id of a patch's decision in a run. */
export function patchEventId(taskId: string, patchId: string): string {
  return `${taskId}:patch:${patchId}`;
}

const restored = new WeakSet<PreparedRun>();

/** Applies the patches a run took (this claim's or an earlier one's) to its prepared steps. */
function usePatches(prepared: PreparedRun, applied: RunOverridesView): void {
  restored.add(prepared);
  if (Object.keys(applied).length === 0) return;
  const patched = applyPatches(prepared.effective, applied);
  prepared.agent = { ...prepared.agent, system: toAgentRunConfig(patched).system };
  const { llm } = prepared.call;
  const params: Record<string, unknown> = { ...llm.params };
  for (const m of ['model', 'temperature', 'max_tokens', 'reasoning_effort'] as const) {
    if (applied[m] !== undefined) params[m] = applied[m];
  }
  // The output mode the previous model accepted says nothing of the new one: the next call looks it up again.
  if (applied.model !== undefined && applied.model !== llm.params.model) llm.outputMode = undefined;
  llm.params = params as typeof llm.params;
}

/**
 * Governance's refusal of the patched model for the run, or undefined when
 * it admits a call of it. The check is an admission like any call's (one
 * rate-limit token of the new model is drawn); governance not answering is
 * thrown, as for a call (the run is retried and decides the patch again).
 */
async function modelRefusal(prepared: PreparedRun, model: string): Promise<RefusalReason | undefined> {
  try {
    await prepared.call.governance.admit(prepared.call.quad, { model, requestedMaxTokens: 1 });
    return undefined;
  } catch (error) {
    if (error instanceof LlmCallRefused) return error.reason;
    throw error;
  }
}

/**
 * The step boundary's look at the session's overrides: the first look of a
 * run sets what it saw; a change since is decided and, when applied, used
 * from this step on. The result is checkpointed with the step.
 */
export async function applyPendingPatch(run: RunState, prepared: PreparedRun): Promise<void> {
  const live = run.checkpoint.live_overrides;
  if (!restored.has(prepared)) usePatches(prepared, live?.applied ?? {});
  const now = await run.deps.runOverrides.get(run.owner);
  const at = now.updated_at ?? '';
  if (live === undefined) {
    run.checkpoint.live_overrides = { at, seen: now.overrides, applied: {} };
    return;
  }
  if (live.at === at) return;
  let decision = decidePatch(live.seen, now.overrides);
  const model = decision.kind === 'apply' ? decision.members.model : undefined;
  const refusal = model === undefined ? undefined : await modelRefusal(prepared, model);
  if (decision.kind === 'apply' && refusal !== undefined) {
    decision = { kind: 'reject', reason: refusal, members: Object.keys(decision.members) as RunOverrideMember[] };
  }
  const next: LiveOverrides = { at, seen: now.overrides, applied: live.applied };
  if (decision.kind === 'apply') {
    next.applied = { ...live.applied, ...decision.members };
    usePatches(prepared, next.applied);
    run.log.info({ patchId: at, members: Object.keys(decision.members) }, 'run patch applied');
    run.events.emit('task.patch_applied', { PatchID: at }, patchEventId(run.taskId, at));
  } else if (decision.kind === 'reject') {
    run.log.info({ patchId: at, members: decision.members, reason: decision.reason }, 'run patch rejected');
    run.events.emit('task.patch_rejected', { PatchID: at }, patchEventId(run.taskId, at));
  }
  run.checkpoint.live_overrides = next;
}
