import { describe, expect, it } from 'vitest';
import { agentFigures } from '../../src/domain/agent-figures.ts';
import type { FigureTask } from '../../src/domain/agent-figures.ts';

const step = (tokensIn: number, tokensOut: number) => ({
  index: 1,
  cost_usd: 0,
  tokens_in: tokensIn,
  tokens_out: tokensOut,
  recorded_at: '2026-01-01T00:00:00.000Z',
});

function task(status: FigureTask['status'], durationMs?: number, extra: Partial<FigureTask> = {}): FigureTask {
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  return {
    status,
    steps: [],
    cost_usd: 0,
    ...(durationMs === undefined
      ? {}
      : { started_at: new Date(start).toISOString(), ended_at: new Date(start + durationMs).toISOString() }),
    ...extra,
  };
}

describe('agent figures', () => {
  it('counts runs by outcome, with the unended ones in flight', () => {
    const figures = agentFigures([task('complete', 10), task('failed', 20), task('cancelled', 30), task('running')]);
    expect(figures).toMatchObject({
      runs_started: 4,
      runs_completed: 1,
      runs_failed: 1,
      runs_cancelled: 1,
      runs_in_flight: 1,
    });
  });

  it('sums tokens, steps and cost', () => {
    const figures = agentFigures([
      task('complete', 10, { steps: [step(10, 2), step(5, 1)], cost_usd: 0.1 }),
      task('complete', 10, { steps: [step(1, 1)], cost_usd: 0.2 }),
    ]);
    expect(figures).toMatchObject({ tokens_in: 16, tokens_out: 4, planner_steps: 3, llm_cost: 0.3 });
  });

  it('takes the durations of the ended runs that started', () => {
    const figures = agentFigures([10, 20, 30, 40].map((ms) => task('complete', ms)).concat(task('pending')));
    expect(figures).toMatchObject({
      duration_ms_avg: 25,
      duration_ms_p50: 20,
      duration_ms_p95: 40,
      duration_ms_max: 40,
    });
  });

  it('answers zeros for no run', () => {
    expect(agentFigures([])).toMatchObject({ runs_started: 0, duration_ms_avg: 0, duration_ms_max: 0, llm_cost: 0 });
  });
});
