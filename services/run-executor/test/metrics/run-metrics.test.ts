import { beforeAll, describe, expect, it } from 'vitest';
import { initMetrics, metricsText } from '@ars/telemetry';
import type { RunMeta } from '../../src/engine/event-pipeline.ts';
import { createRunMetrics } from '../../src/metrics/run-metrics.ts';

/** The value of the sample `name{labels}` in the process's Prometheus text (0 when absent). */
async function sample(line: string): Promise<number> {
  const text = (await metricsText()) ?? '';
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.slice(line.length + 1));
}

const EXECUTOR = 'ars_service="run-executor"';

describe('run metrics derived from stored events', () => {
  beforeAll(() => {
    initMetrics({ serviceName: 'run-executor' });
  });

  it('counts a started and completed run by agent and times it from its acceptance', async () => {
    let now = 10_000;
    const observer = createRunMetrics(() => now);
    const meta: RunMeta = { agentId: 'agent-completes', acceptedAtMs: 9_000 };
    observer.stored('task.started', { TaskID: 't1', PriorState: 'pending' }, meta);
    now = 10_500;
    observer.stored('llm.completion.chunk', { Delta: 'x' }, meta);
    now = 12_000;
    observer.stored('llm.completion.chunk', { Delta: 'y' }, meta);
    now = 13_000;
    observer.stored('task.completed', { TaskID: 't1', NotifyOnComplete: false }, meta);

    const agent = `${EXECUTOR},ars_agent="agent-completes"`;
    expect(await sample(`ars_runs_started_total{${agent}}`)).toBe(1);
    expect(await sample(`ars_runs_finished_total{${agent},ars_run_outcome="completed"}`)).toBe(1);
    expect(await sample(`ars_run_duration_sum{${agent},ars_run_outcome="completed"}`)).toBe(4);
    // Only the first event after task.started counts: 1.5 s after acceptance.
    expect(await sample(`ars_run_time_to_first_event_count{${agent}}`)).toBe(1);
    expect(await sample(`ars_run_time_to_first_event_sum{${agent}}`)).toBe(1.5);
  });

  it('counts a failed run under its error code and a cancelled one under cancelled', async () => {
    const observer = createRunMetrics(() => 5_000);
    const failed: RunMeta = { agentId: 'agent-ends', acceptedAtMs: 4_000 };
    const cancelled: RunMeta = { agentId: 'agent-ends', acceptedAtMs: 4_500 };
    observer.stored('task.failed', { TaskID: 'f', ErrorCode: 'llm_unavailable' }, failed);
    observer.stored('task.cancelled', { TaskID: 'c', Reason: 'user', Cascaded: false }, cancelled);

    const agent = `${EXECUTOR},ars_agent="agent-ends"`;
    expect(
      await sample(`ars_runs_finished_total{${agent},ars_run_outcome="failed",error_type="llm_unavailable"}`),
    ).toBe(1);
    expect(await sample(`ars_runs_finished_total{${agent},ars_run_outcome="cancelled"}`)).toBe(1);
    expect(await sample(`ars_run_duration_sum{${agent},ars_run_outcome="cancelled"}`)).toBe(0.5);
    // No run was started here: a redelivered run's terminal event still counts, its start does not.
    expect(await sample(`ars_runs_started_total{${agent}}`)).toBe(0);
  });

  it('adds tokens and cost by model from llm.cost.recorded', async () => {
    const observer = createRunMetrics();
    const meta: RunMeta = { agentId: 'a', acceptedAtMs: 0 };
    const cost = {
      Model: 'model-cost-test',
      Cost: { currency: 'USD', total: 0.25 },
      Usage: { input_tokens: 120, output_tokens: 30, total_tokens: 150 },
    };
    observer.stored('llm.cost.recorded', cost, meta);
    observer.stored('llm.cost.recorded', cost, undefined);

    const model = `${EXECUTOR},gen_ai_operation_name="chat",gen_ai_request_model="model-cost-test"`;
    expect(await sample(`gen_ai_client_token_usage_sum{${model},gen_ai_token_type="input"}`)).toBe(240);
    expect(await sample(`gen_ai_client_token_usage_sum{${model},gen_ai_token_type="output"}`)).toBe(60);
    expect(await sample(`ars_llm_cost_total{${model}}`)).toBe(0.5);
  });

  it('counts tool calls by tool and outcome and times the successful ones', async () => {
    const observer = createRunMetrics();
    const call = { ToolName: 'tool-metrics-test', Transport: 'builtin', Attempts: 1 };
    observer.stored('tool.invoked', { ...call, StartedAt: 'x' }, undefined);
    observer.stored('tool.failed', { ...call, ErrorClass: 'transient', ErrorMessage: 'boom' }, undefined);
    observer.stored('tool.completed', { ...call, Attempts: 2, DurationMS: 250 }, undefined);
    observer.stored('tool.policy_exhausted', { ...call, LastClass: 'x', LastError: 'y' }, undefined);

    const tool = `${EXECUTOR},ars_tool_name="tool-metrics-test"`;
    expect(await sample(`ars_tool_calls_total{${tool},ars_tool_outcome="completed"}`)).toBe(1);
    expect(await sample(`ars_tool_calls_total{${tool},ars_tool_outcome="failed"}`)).toBe(1);
    expect(await sample(`ars_tool_calls_total{${tool},ars_tool_outcome="policy_exhausted"}`)).toBe(1);
    expect(await sample(`ars_tool_calls_total{${tool},ars_tool_outcome="invalid_args"}`)).toBe(0);
    expect(await sample(`ars_tool_duration_sum{${tool}}`)).toBe(0.25);
  });
});
