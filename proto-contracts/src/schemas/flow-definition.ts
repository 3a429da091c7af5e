import { z } from 'zod';
import { Id, JsonObject } from './common.ts';

/**
 * A flow's definition: the data an operator writes (a YAML or JSON file of
 * the run-executor's `FLOWS_DIR`) to compose agent runs. Steps run in list
 * order; a `branch` step jumps forward to another step (or ends the flow).
 *
 * Query templates insert `{{input.<path>}}` (the flow run's input; a
 * non-string value as JSON), `{{steps.<id>.answer}}` (a step's answer; a
 * parallel step's answers joined by a blank line), `{{steps.<id>.answers.<n>}}`
 * (the n-th branch's answer, 0-based) and `{{steps.<id>.outcome}}`
 * (`completed` or `failed`). A step reference names an earlier step; a step a
 * branch skipped renders empty.
 */

/** Pattern of a step id: lower-case letters, digits, `_` and `-`, starting with a letter; at most 64 characters. */
export const FLOW_STEP_ID_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;

/** A step id. */
export const FlowStepId = z
  .string()
  .regex(FLOW_STEP_ID_PATTERN, 'a step id is lower-case letters, digits, _ and -, starting with a letter')
  .describe('step id, unique in its flow');

/** Where a branch goes besides a step id: `$end` completes the flow, `$fail` fails it (`flow_step_failed`). */
export const FLOW_END_TARGETS = { end: '$end', fail: '$fail' } as const;

/** A branch target: a later step's id, `$end` or `$fail`. */
export const FlowTarget = z.union([FlowStepId, z.literal(FLOW_END_TARGETS.end), z.literal(FLOW_END_TARGETS.fail)]);
export type FlowTarget = z.infer<typeof FlowTarget>;

/** Longest query template, in characters (a rendered query is bounded by `start`'s own limit). */
export const FLOW_TEMPLATE_MAX_CHARS = 32_768;

/** A query template (see the module comment for its references). */
export const FlowTemplate = z.string().min(1).max(FLOW_TEMPLATE_MAX_CHARS);

/** One child run of a step: its agent (default: the flow's, else the runtime's default) and its query. */
export const FlowRunSpec = z.strictObject({
  agent_id: Id.optional(),
  query: FlowTemplate,
});
export type FlowRunSpec = z.infer<typeof FlowRunSpec>;

/** A `run` step: one child run. */
export const FlowRunStep = z.strictObject({
  id: FlowStepId,
  type: z.literal('run'),
  agent_id: Id.optional(),
  query: FlowTemplate,
});
export type FlowRunStep = z.infer<typeof FlowRunStep>;

/** How a parallel step joins: `all` completes once every branch completed; `any` once the first did (the rest are cancelled). */
export const FLOW_JOINS = ['all', 'any'] as const;

/** Most branches of one parallel step. */
export const FLOW_MAX_BRANCHES = 32;

/** A `parallel` step: a fan-out of child runs and their fan-in. */
export const FlowParallelStep = z.strictObject({
  id: FlowStepId,
  type: z.literal('parallel'),
  branches: z.array(FlowRunSpec).min(1).max(FLOW_MAX_BRANCHES),
  join: z.enum(FLOW_JOINS).default('all'),
});
export type FlowParallelStep = z.infer<typeof FlowParallelStep>;

/** The outcomes a branch case can test. */
export const FLOW_OUTCOMES = ['completed', 'failed'] as const;
export type FlowOutcome = (typeof FLOW_OUTCOMES)[number];

/** A branch condition: every member given must hold (an outcome, and/or the answer matching a regular expression). */
export const FlowCondition = z
  .strictObject({
    outcome: z.enum(FLOW_OUTCOMES).optional(),
    answer_matches: z.string().min(1).max(1024).optional().describe('a JavaScript regular expression, unanchored'),
  })
  .refine((c) => c.outcome !== undefined || c.answer_matches !== undefined, {
    message: 'a condition names an outcome, answer_matches, or both',
  });
export type FlowCondition = z.infer<typeof FlowCondition>;

/** One case of a branch: the first whose condition holds chooses the target. */
export const FlowBranchCase = z.strictObject({ when: FlowCondition, goto: FlowTarget });
export type FlowBranchCase = z.infer<typeof FlowBranchCase>;

/**
 * A `branch` step: chooses where the flow goes on from the result of the
 * earlier step `on`. Without a matching case it goes to `default` (default:
 * the next step). A failed step that a later branch reads does not fail the
 * flow: the branch decides.
 */
export const FlowBranchStep = z.strictObject({
  id: FlowStepId,
  type: z.literal('branch'),
  on: FlowStepId,
  cases: z.array(FlowBranchCase).min(1).max(32),
  default: FlowTarget.optional(),
});
export type FlowBranchStep = z.infer<typeof FlowBranchStep>;

/** One step of a flow. */
export const FlowStep = z.discriminatedUnion('type', [FlowRunStep, FlowParallelStep, FlowBranchStep]);
export type FlowStep = z.infer<typeof FlowStep>;

/** The budget axes of a flow (the `Axis` of `flow.budget_exceeded`). */
export const FLOW_BUDGET_AXES = ['tokens', 'cost_usd', 'steps', 'wall_time_ms'] as const;
export type FlowBudgetAxis = (typeof FLOW_BUDGET_AXES)[number];

/**
 * A flow's budget, every axis optional: LLM tokens (in + out) and cost (USD)
 * of all its child runs, child runs spawned (`steps`), and wall time since
 * the flow run started (ms). Crossing one stops the flow.
 */
export const FlowBudget = z.strictObject({
  tokens: z.int().positive().optional(),
  cost_usd: z.number().positive().optional(),
  steps: z.int().positive().max(10_000).optional(),
  wall_time_ms: z.int().positive().optional(),
});
export type FlowBudget = z.infer<typeof FlowBudget>;

/** Most steps of one flow. */
export const FLOW_MAX_STEPS = 64;

const TEMPLATE_REFERENCE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const INPUT_REFERENCE = /^input((?:\.[A-Za-z0-9_-]+)+)$/;
const STEP_REFERENCE = /^steps\.([a-z][a-z0-9_-]{0,63})\.(answer|outcome|answers\.(\d{1,2}))$/;

/** A reference in a query template. */
export type FlowTemplateReference =
  | { readonly kind: 'input'; readonly path: readonly string[]; readonly text: string }
  | {
      readonly kind: 'step';
      readonly step: string;
      readonly member: 'answer' | 'outcome' | 'answers';
      readonly index?: number;
      readonly text: string;
    }
  | { readonly kind: 'invalid'; readonly text: string };

/** The references of a template, in order (`text` is the whole `{{…}}`). */
export function flowTemplateReferences(template: string): FlowTemplateReference[] {
  return [...template.matchAll(TEMPLATE_REFERENCE)].map((match): FlowTemplateReference => {
    const [text, expression = ''] = match;
    const input = INPUT_REFERENCE.exec(expression);
    if (input !== null) return { kind: 'input', path: (input[1] ?? '').slice(1).split('.'), text };
    const step = STEP_REFERENCE.exec(expression);
    if (step === null) return { kind: 'invalid', text };
    const [, id = '', member = '', index] = step;
    if (index !== undefined) return { kind: 'step', step: id, member: 'answers', index: Number(index), text };
    return { kind: 'step', step: id, member: member as 'answer' | 'outcome', text };
  });
}

/** The query templates of a step, with their paths for messages. */
function templatesOf(step: FlowStep, index: number): { path: (string | number)[]; template: string }[] {
  if (step.type === 'run') return [{ path: ['steps', index, 'query'], template: step.query }];
  if (step.type === 'parallel') {
    return step.branches.map((b, i) => ({ path: ['steps', index, 'branches', i, 'query'], template: b.query }));
  }
  return [];
}

function checkTemplates(steps: readonly FlowStep[], ctx: z.RefinementCtx): void {
  const earlier = new Set<string>();
  steps.forEach((step, index) => {
    for (const { path, template } of templatesOf(step, index)) {
      for (const ref of flowTemplateReferences(template)) {
        if (ref.kind === 'invalid') {
          ctx.addIssue({ code: 'custom', path, message: `${ref.text} is not a template reference` });
        } else if (ref.kind === 'step' && !earlier.has(ref.step)) {
          ctx.addIssue({ code: 'custom', path, message: `${ref.text} names no earlier step` });
        }
      }
    }
    earlier.add(step.id);
  });
}

function checkRegex(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function checkBranch(steps: readonly FlowStep[], index: number, ctx: z.RefinementCtx): void {
  const step = steps[index];
  if (step?.type !== 'branch') return;
  const position = new Map(steps.map((s, i) => [s.id, i]));
  const on = position.get(step.on);
  if (on === undefined || on >= index || steps[on]?.type === 'branch') {
    ctx.addIssue({
      code: 'custom',
      path: ['steps', index, 'on'],
      message: `${step.on} is not an earlier run or parallel step`,
    });
  }
  const targets = [
    ...step.cases.map((c, i) => ({ target: c.goto, path: ['steps', index, 'cases', i, 'goto'] })),
    ...(step.default === undefined ? [] : [{ target: step.default, path: ['steps', index, 'default'] }]),
  ];
  for (const { target, path } of targets) {
    if (target === FLOW_END_TARGETS.end || target === FLOW_END_TARGETS.fail) continue;
    const at = position.get(target);
    // Forward only: every flow ends after at most one pass over its steps.
    if (at === undefined || at <= index)
      ctx.addIssue({ code: 'custom', path, message: `${target} is not a later step` });
  }
  step.cases.forEach((c, i) => {
    const problem = c.when.answer_matches === undefined ? undefined : checkRegex(c.when.answer_matches);
    if (problem !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['steps', index, 'cases', i, 'when', 'answer_matches'], message: problem });
    }
  });
}

/**
 * A flow definition. `tenant`, when given, must name the tenant directory
 * the file is in; the flow id is the file's name.
 */
export const FlowDefinition = z
  .strictObject({
    name: z.string().min(1).max(256).optional().describe('display name; default: the flow id'),
    description: z.string().max(4096).optional(),
    tenant: Id.optional().describe("the owning tenant; default: the file's tenant directory"),
    agent_id: Id.optional().describe("the agent of steps that name none; default: the runtime's default agent"),
    input_schema: JsonObject.optional().describe("a JSON Schema the flow run's input must satisfy"),
    budget: FlowBudget.optional(),
    steps: z.array(FlowStep).min(1).max(FLOW_MAX_STEPS),
  })
  .superRefine((definition, ctx) => {
    const seen = new Set<string>();
    definition.steps.forEach((step, index) => {
      if (seen.has(step.id)) {
        ctx.addIssue({ code: 'custom', path: ['steps', index, 'id'], message: `step id ${step.id} is used twice` });
      }
      seen.add(step.id);
      checkBranch(definition.steps, index, ctx);
    });
    checkTemplates(definition.steps, ctx);
  });
export type FlowDefinition = z.infer<typeof FlowDefinition>;
