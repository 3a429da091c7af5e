import { FLOW_END_TARGETS } from '@ars/contracts';
import type { FlowBranchStep, FlowBudget, FlowBudgetAxis, FlowStep, FlowTarget } from '@ars/contracts';
import type { StepResult } from './template.ts';

/**
 * The pure rules of a flow run's progress: when a step's children are
 * joined, what a branch chooses, whether a failed step ends the flow, when
 * a budget is crossed, and the fixed keys of a step's children. No I/O.
 */

/** The task.failed ErrorCodes a flow's parent task ends with. */
export const FLOW_ERROR_CODES = {
  /** A budget axis was crossed (`flow.budget_exceeded` names it). */
  budgetExceeded: 'flow_budget_exceeded',
  /** A step failed and no later branch reads it, or a branch chose `$fail`. */
  stepFailed: 'flow_step_failed',
  /** A rendered query is not a valid `start` query (empty, or over its bound). */
  queryInvalid: 'flow_query_invalid',
} as const;

/** The kind of a flow run's parent task. */
export const FLOW_TASK_KIND = 'flow';

/** How one child run ended, as its step sees it. */
export interface ChildOutcome {
  readonly status: 'complete' | 'failed' | 'cancelled';
  readonly answer?: string;
  readonly error_code?: string;
}

/** A step's join: still waiting, or decided with its result. */
export type JoinDecision =
  | { readonly kind: 'wait' }
  | {
      readonly kind: 'completed';
      readonly answer: string;
      readonly answers: string[];
      /** Branches still running, to cancel (a join `any`). */
      readonly cancel: number[];
    }
  | { readonly kind: 'failed'; readonly error_code: string; readonly answers: string[] };

const answersOf = (outcomes: readonly (ChildOutcome | undefined)[]) => outcomes.map((o) => o?.answer ?? '');

/**
 * Joins a step's children: `all` completes once every child completed and
 * fails once every child ended and one did not; `any` completes with the
 * first completed child (in branch order) and cancels the rest, and fails
 * once every child ended without one completing.
 */
export function joinChildren(join: 'all' | 'any', outcomes: readonly (ChildOutcome | undefined)[]): JoinDecision {
  const answers = answersOf(outcomes);
  if (join === 'any') {
    const winner = outcomes.findIndex((o) => o?.status === 'complete');
    if (winner >= 0) {
      const cancel = outcomes.flatMap((o, i) => (o === undefined ? [i] : []));
      return { kind: 'completed', answer: answers[winner] ?? '', answers, cancel };
    }
  }
  if (outcomes.some((o) => o === undefined)) return { kind: 'wait' };
  const bad = outcomes.find((o) => o?.status !== 'complete');
  if (bad === undefined) return { kind: 'completed', answer: answers.join('\n\n'), answers, cancel: [] };
  return { kind: 'failed', error_code: bad.error_code ?? bad.status, answers };
}

/** Whether a branch condition holds of a step's result (a step that did not run has no outcome and an empty answer). */
function holds(when: FlowBranchStep['cases'][number]['when'], result: StepResult | undefined): boolean {
  if (when.outcome !== undefined && result?.outcome !== when.outcome) return false;
  if (when.answer_matches !== undefined && !new RegExp(when.answer_matches, 'u').test(result?.answer ?? '')) {
    return false;
  }
  return true;
}

/** Where a branch goes: its first case that holds, else its default, else the step after it (or `$end`). */
export function branchTarget(steps: readonly FlowStep[], index: number, result: StepResult | undefined): FlowTarget {
  const step = steps[index];
  if (step?.type !== 'branch') throw new Error(`step ${index} is not a branch`);
  const chosen = step.cases.find((c) => holds(c.when, result));
  return chosen?.goto ?? step.default ?? steps[index + 1]?.id ?? FLOW_END_TARGETS.end;
}

/** The index a target names: a step's, or `steps.length` for `$end`; `undefined` for `$fail`. */
export function targetIndex(steps: readonly FlowStep[], target: FlowTarget): number | undefined {
  if (target === FLOW_END_TARGETS.fail) return undefined;
  if (target === FLOW_END_TARGETS.end) return steps.length;
  const at = steps.findIndex((s) => s.id === target);
  if (at < 0) throw new Error(`branch target ${target} names no step`);
  return at;
}

/** Whether a later branch reads step `index`'s result: then its failure does not end the flow. */
export function failureHandled(steps: readonly FlowStep[], index: number): boolean {
  const id = steps[index]?.id;
  return steps.slice(index + 1).some((s) => s.type === 'branch' && s.on === id);
}

/** What a flow run consumed: the budget axes. */
export interface FlowUsageFigures {
  readonly tokens: number;
  readonly cost_usd: number;
  readonly steps: number;
  readonly wall_time_ms: number;
}

/**
 * The first budget axis `usage` went past (`steps` past its bound once
 * more child runs were spawned than allowed), in the order tokens, cost,
 * steps, wall time.
 */
export function exceededAxis(budget: FlowBudget | undefined, usage: FlowUsageFigures): FlowBudgetAxis | undefined {
  if (budget === undefined) return undefined;
  if (budget.tokens !== undefined && usage.tokens > budget.tokens) return 'tokens';
  if (budget.cost_usd !== undefined && usage.cost_usd > budget.cost_usd) return 'cost_usd';
  if (budget.steps !== undefined && usage.steps > budget.steps) return 'steps';
  if (budget.wall_time_ms !== undefined && usage.wall_time_ms > budget.wall_time_ms) return 'wall_time_ms';
  return undefined;
}

/** Whether spawning `count` more child runs would go past the `steps` budget. */
export function stepsWouldExceed(budget: FlowBudget | undefined, spawned: number, count: number): boolean {
  return budget?.steps !== undefined && spawned + count > budget.steps;
}

/** The idempotency key of a step's `index`-th child: a resumed flow spawning it again finds the first one. */
export function childSpawnKey(runId: string, stepId: string, attempt: number, index: number): string {
  return `flow:${runId}:${stepId}:${attempt}:${index}`;
}

/** The task group holding a step's children's outcomes (their answers). */
export function stepGroupId(parentTaskId: string, stepId: string, attempt: number): string {
  return `${parentTaskId}:flow:${stepId}:${attempt}`;
}

/** The child run specs of a run or parallel step. */
export function childSpecs(step: FlowStep): { agent_id?: string; query: string }[] {
  if (step.type === 'run')
    return [{ ...(step.agent_id === undefined ? {} : { agent_id: step.agent_id }), query: step.query }];
  if (step.type === 'parallel') return step.branches.map((b) => ({ ...b }));
  return [];
}
