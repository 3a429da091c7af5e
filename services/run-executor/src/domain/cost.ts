import type { CostTotal, StepCost } from '@ars/contracts';
import { COST_CURRENCY } from './task.ts';
import type { StepRecord } from './task.ts';

/** The per-step cost rollup of TaskDetail, ordered by step. */
export function costRollup(steps: readonly StepRecord[]): StepCost[] {
  return [...steps]
    .sort((a, b) => a.index - b.index)
    .map((step) => ({
      step: step.index,
      model: step.model ?? '',
      input_tokens: step.tokens_in,
      output_tokens: step.tokens_out,
      cost: step.cost_usd,
      currency: COST_CURRENCY,
      ...(step.tool === undefined ? {} : { tool: step.tool }),
    }));
}

/** The sum of a rollup. */
export function costTotal(rollup: readonly StepCost[]): CostTotal {
  return rollup.reduce<CostTotal>(
    (sum, step) => ({
      input_tokens: sum.input_tokens + step.input_tokens,
      output_tokens: sum.output_tokens + step.output_tokens,
      cost: sum.cost + step.cost,
      currency: COST_CURRENCY,
    }),
    { input_tokens: 0, output_tokens: 0, cost: 0, currency: COST_CURRENCY },
  );
}
