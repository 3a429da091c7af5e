import type { Decision } from '../providers/provider.ts';
import { checkToolCall, RUN_ERROR_CODES } from './planner.ts';
import { countRepair, dropExtraFields, REPAIR_COUNTER, repairGuidance, repairTier } from './repair.ts';
import { occurredAt } from './run-events.ts';
import { finishRun } from './run-finish.ts';
import type { PreparedRun } from './run-prepare.ts';
import type { RunState } from './run-state.ts';

/**
 * The planner's repair of a run's invalid tool calls (`repair.ts` holds the
 * rules): members the tool's schema forbids are dropped
 * (`planner.action_extra_field_dropped`, one per member, not a repair) when
 * that makes the call valid; an
 * invalid call is fed back with guidance (`planner.repair_guidance_injected`,
 * `llm.retry_with_feedback`) up to `PLANNER_REPAIR_MAX` consecutive ones; the
 * next is `planner.repair_exhausted` and the run fails `llm_error`.
 */

type ToolCall = Extract<Decision, { kind: 'tool_call' }>;

function schemaOf(prepared: PreparedRun, tool: string): Readonly<Record<string, unknown>> | undefined {
  return prepared.exposed.has(tool) ? prepared.specs.find((s) => s.name === tool)?.parameters : undefined;
}

/** The call without the members its schema forbids, each dropped one reported. */
export function withoutExtraFields(run: RunState, prepared: PreparedRun, decision: ToolCall): ToolCall {
  if (decision.args === undefined) return decision;
  const { args, dropped } = dropExtraFields(decision.args, schemaOf(prepared, decision.tool));
  if (dropped.length === 0) return decision;
  // Only when dropping makes the call valid: otherwise the model is told everything that is wrong.
  if (!checkToolCall({ ...decision, args }, prepared.exposed).ok) return decision;
  const at = occurredAt();
  for (const field of dropped) {
    run.events.emit('planner.action_extra_field_dropped', { Identity: run.events.quad, Field: field, OccurredAt: at });
  }
  return { ...decision, args };
}

/**
 * Counts an invalid call: the feedback the model gets (the validation error
 * with the tier's guidance), or undefined once the bound is passed and the
 * run has ended.
 */
export async function repairInvalidCall(
  run: RunState,
  prepared: PreparedRun,
  decision: ToolCall,
  error: string,
  model: string,
): Promise<string | undefined> {
  const counter = countRepair(run.checkpoint.repairs, error);
  run.checkpoint.repairs = counter;
  const quad = run.events.quad;
  const max = run.deps.settings.repairMax;
  const at = occurredAt();
  if (counter.consecutive > max) {
    run.events.emit('planner.repair_exhausted', {
      Identity: quad,
      Attempts: counter.total,
      ConsecutiveArgFailures: counter.consecutive,
      Reasons: counter.reasons,
      OccurredAt: at,
    });
    const reason = `the model made ${counter.consecutive} invalid tool calls in a row: ${error}`;
    await finishRun(run, { status: 'failed', error_code: RUN_ERROR_CODES.llmError, reason });
    return undefined;
  }
  const tier = repairTier(counter.consecutive);
  run.events.emit('planner.repair_guidance_injected', {
    Identity: quad,
    Tier: tier,
    Counter: REPAIR_COUNTER,
    Count: counter.consecutive,
    OccurredAt: at,
  });
  run.events.emit('llm.retry_with_feedback', {
    Identity: quad,
    Model: model,
    Attempt: counter.consecutive,
    MaxRetries: max,
    Reason: error,
    OccurredAt: at,
  });
  const guidance = repairGuidance(tier, decision.tool, schemaOf(prepared, decision.tool), [...prepared.exposed.keys()]);
  return `${error}\n${guidance}`;
}
