import { afterAll, describe, expect, it } from 'vitest';
import {
  InMemorySpanExporter,
  SpanKind,
  context,
  initMetrics,
  initTelemetry,
  metricsText,
  trace,
} from '@ars/telemetry';
import type { CompletionResult } from '../../src/providers/provider.ts';
import { withLlmSpan, withToolSpan } from '../../src/engine/call-spans.ts';
import { linkAttempts, withControlSpan, withRunSpan, withStepSpan } from '../../src/engine/run-spans.ts';

describe('the spans of a run', () => {
  const exporter = new InMemorySpanExporter();
  const telemetry = initTelemetry({ serviceName: 'run-executor', exporter });
  initMetrics({ serviceName: 'run-executor' });
  afterAll(() => telemetry.shutdown());
  const finished = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);

  it("links a redelivered run's span to the previous attempt the checkpoint kept", async () => {
    const first = await withRunSpan('task-a', 1, async () => linkAttempts(undefined));
    const second = await withRunSpan('task-a', 2, async () => linkAttempts(first));
    const [one, two] = finished('run').filter((s) => s.attributes['ars.task.id'] === 'task-a');
    expect(first).toBe(`00-${one?.spanContext().traceId}-${one?.spanContext().spanId}-01`);
    expect(one?.links).toEqual([]);
    expect(two?.attributes['ars.run.delivery']).toBe(2);
    expect(two?.links.map((l) => l.context.spanId)).toEqual([one?.spanContext().spanId]);
    expect(second).toBe(`00-${two?.spanContext().traceId}-${two?.spanContext().spanId}-01`);
  });

  it('hangs a control under its run, linked to the request that sent it, and steps under the run', async () => {
    let runSpanId = '';
    await withRunSpan('task-b', 1, async () => {
      await withStepSpan(1, async () => {
        // A control arrives while the step runs, from another trace.
        await withSpanOfRequest(() => withControlSpan('task-b', 'pause', async () => undefined));
      });
      runSpanId = finished('step').at(-1)?.parentSpanContext?.spanId ?? '';
    });
    const [control] = finished('control pause');
    expect(control?.parentSpanContext?.spanId).toBe(runSpanId);
    expect(control?.links).toHaveLength(1);
    expect(control?.links[0]?.context.traceId).not.toBe(control?.spanContext().traceId);
    expect(control?.attributes).toMatchObject({ 'ars.service': 'run-executor', 'ars.control': 'pause' });
  });

  it('records an LLM call after the GenAI conventions, with the first token as an event, and times it by model', async () => {
    const chunks: string[] = [];
    const result = await withLlmSpan(
      { system: 'openai', provider: 'vllm-east', model: 'm-1', maxTokens: 256, callId: 't:1:1:c' },
      (delta) => chunks.push(delta),
      async (onChunk) => {
        onChunk('a', 'text');
        onChunk('b', 'text');
        return completion;
      },
    );
    expect(result).toBe(completion);
    expect(chunks).toEqual(['a', 'b']);
    const [span] = finished('chat m-1');
    expect(span?.kind).toBe(SpanKind.CLIENT);
    expect(span?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'm-1',
      'gen_ai.response.model': 'm-1-2025',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 3,
      'ars.llm.provider': 'vllm-east',
    });
    expect(span?.events.filter((e) => e.name === 'gen_ai.first_token')).toHaveLength(1);
    const text = (await metricsText()) ?? '';
    expect(text).toMatch(/gen_ai_client_operation_duration_count\{[^}]*gen_ai_request_model="m-1"[^}]*\} 1/);
  });

  it('times a failed provider call under error.type and rethrows it', async () => {
    const boom = new Error('provider down');
    await expect(
      withLlmSpan(
        { system: 'openai', provider: 'p', model: 'm-2', maxTokens: 1, callId: 'x' },
        () => undefined,
        () => Promise.reject(boom),
      ),
    ).rejects.toBe(boom);
    const text = (await metricsText()) ?? '';
    const failed = text
      .split('\n')
      .filter((line) => line.startsWith('gen_ai_client_operation_duration_count{') && line.includes('"m-2"'));
    expect(failed.find((line) => line.includes('error_type="provider_error"'))).toMatch(/ 1$/);
    expect(failed.find((line) => !line.includes('error_type'))).toMatch(/ 0$/);
  });

  it('records a tool call with its outcome, an MCP one as a client call naming its server', async () => {
    await withToolSpan(
      { tool: 'search', transport: 'streamable_http', source: 'srv-1', callId: 'c1' },
      async () => 'x',
      () => 'completed',
    );
    const [span] = finished('execute_tool search');
    expect(span?.kind).toBe(SpanKind.CLIENT);
    expect(span?.attributes).toMatchObject({
      'gen_ai.tool.name': 'search',
      'ars.mcp.server': 'srv-1',
      'ars.tool.outcome': 'completed',
    });
  });
});

const completion: CompletionResult = {
  decision: { kind: 'finish', answer: 'done' },
  reasoning: '',
  model: 'm-1-2025',
  usage: { input_tokens: 12, output_tokens: 3 },
  costUsd: 0,
  contextWindowTokens: 8192,
};

/** Runs `fn` as a steering request of another trace would: inside that request's (root) span. */
async function withSpanOfRequest<T>(fn: () => Promise<T>): Promise<T> {
  const request = trace.getTracer('test').startSpan('POST /v1/control/pause', { root: true });
  try {
    return await context.with(trace.setSpan(context.active(), request), fn);
  } finally {
    request.end();
  }
}
