import type { TaskRecord } from './task.ts';

/** What {@link agentFigures} reads of a task. */
export type FigureTask = Pick<TaskRecord, 'status' | 'started_at' | 'ended_at' | 'steps' | 'cost_usd'>;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? 0;
}

/**
 * The agents.metrics counters of a set of tasks (the runs started in the
 * window): runs by outcome, durations of the ended runs that started (from
 * claim to end, in ms), tokens and cost summed over their planner steps.
 */
export function agentFigures(tasks: readonly FigureTask[]): Record<string, number> {
  let completed = 0;
  let failed = 0;
  let cancelled = 0;
  let inFlight = 0;
  let tokensIn = 0;
  let tokensOut = 0;
  let cost = 0;
  let steps = 0;
  const durations: number[] = [];
  for (const task of tasks) {
    if (task.status === 'complete') completed += 1;
    else if (task.status === 'failed') failed += 1;
    else if (task.status === 'cancelled') cancelled += 1;
    else inFlight += 1;
    for (const step of task.steps ?? []) {
      tokensIn += step.tokens_in;
      tokensOut += step.tokens_out;
      steps += 1;
    }
    cost += task.cost_usd ?? 0;
    if (task.started_at !== undefined && task.ended_at !== undefined) {
      durations.push(Math.max(0, Date.parse(task.ended_at) - Date.parse(task.started_at)));
    }
  }
  durations.sort((a, b) => a - b);
  const total = durations.reduce((sum, d) => sum + d, 0);
  return {
    runs_started: tasks.length,
    runs_completed: completed,
    runs_failed: failed,
    runs_cancelled: cancelled,
    runs_in_flight: inFlight,
    planner_steps: steps,
    duration_ms_avg: durations.length === 0 ? 0 : Math.round(total / durations.length),
    duration_ms_p50: percentile(durations, 50),
    duration_ms_p95: percentile(durations, 95),
    duration_ms_max: durations[durations.length - 1] ?? 0,
    tokens_in: tokensIn,
    tokens_out: tokensOut,
    llm_cost: Math.round(cost * 1e6) / 1e6,
  };
}
