import type { FlowDefinition } from '@ars/contracts';
import type { FlowRunProgress, FlowRunRecord, FlowStepRecord } from './flow-run.repository.ts';
import { branchTarget, targetIndex } from './progress.ts';
import type { StepResult, TemplateScope } from './template.ts';

/**
 * A flow run's branch steps and what its templates see of earlier steps:
 * the recorded step states read as results.
 */

/** What a later step sees of a recorded step: an outcome only once it completed or failed. */
export function stepResult(state: FlowStepRecord | undefined): StepResult | undefined {
  if (state === undefined || (state.status !== 'completed' && state.status !== 'failed')) return undefined;
  return {
    outcome: state.status,
    ...(state.answer === undefined ? {} : { answer: state.answer }),
    ...(state.answers === undefined ? {} : { answers: state.answers }),
  };
}

/** The template scope of a flow run now: its input and its recorded steps' results. */
export function flowScope(
  record: FlowRunRecord,
  definition: FlowDefinition,
  input: Record<string, unknown>,
): TemplateScope {
  const steps = new Map<string, StepResult>();
  definition.steps.forEach((step, i) => {
    const result = stepResult(record.steps[i]);
    if (result !== undefined) steps.set(step.id, result);
  });
  return { input, steps };
}

/**
 * Takes branch step `index`: records its choice, marks the steps it jumps
 * over `skipped` and moves the cursor to the target, in one write.
 * `fail` when the branch chose `$fail` (the caller fails the flow).
 */
export async function takeBranch(
  record: FlowRunRecord,
  definition: FlowDefinition,
  index: number,
  save: (progress: FlowRunProgress) => Promise<void>,
): Promise<'next' | 'fail'> {
  const step = definition.steps[index];
  if (step?.type !== 'branch') throw new Error(`flow step ${index} is not a branch`);
  const on = definition.steps.findIndex((s) => s.id === step.on);
  const target = branchTarget(definition.steps, index, stepResult(record.steps[on]));
  const at = targetIndex(definition.steps, target);
  const when = new Date().toISOString();
  const steps = record.steps.map((state, i): FlowStepRecord => {
    if (i === index) return { ...state, status: 'completed', next: target, started_at: when, ended_at: when };
    const jumped = i > index && i < (at ?? definition.steps.length);
    return jumped && state.status === 'pending' ? { ...state, status: 'skipped' } : state;
  });
  await save(at === undefined ? { steps } : { steps, cursor: at });
  return at === undefined ? 'fail' : 'next';
}
