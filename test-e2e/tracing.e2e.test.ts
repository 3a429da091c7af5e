import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { startTestSystem, waitFor } from '@ars/testkit';
import type { TestSystem } from '@ars/testkit';
import { EventLog } from './support/event-log.ts';
import { startOtlpReceiver } from '@ars/telemetry/testing';
import type { OtlpReceiver, ReceivedSpan } from '@ars/telemetry/testing';
import { streamCursor } from './support/runs.ts';
import type { Started } from './support/runs.ts';

/**
 * Traces of the one-process system (what `ars up` runs) as an OTLP/HTTP
 * receiver sees them: a start with the caller's `traceparent` gives one
 * trace, from the gateway's request span to the run, its planner steps, the
 * LLM calls (GenAI attributes), the tool calls and a control, and the
 * session's handling of the run's events; the SSE frames name that trace.
 * The standard OTEL_* variables choose the sampler, protocol and resource.
 */

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const traceparent = (flags: '00' | '01', trace = CALLER_TRACE) => `00-${trace}-${CALLER_SPAN}-${flags}`;
/** A marker in the prompt and the tool's arguments: it must appear in no span. */
const SECRET = 'PROMPT-TEXT-7f3a9c';
const SCRIPT = `#script tool:echo{"text":"${SECRET}"};tool:wait{ms:1500};finish:${SECRET}`;
const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

/** Starts a run under `traceparent`, with its event log (from before the start). */
async function startTraced(client: ArsClient, query: string, parent: string | undefined) {
  const cursor = await streamCursor(client);
  const started = await client.call<Started>(
    'start',
    { identity: {}, query },
    parent === undefined ? {} : { headers: { traceparent: parent } },
  );
  return { taskId: started.task_id, log: new EventLog(client, { run: started.task_id, lastEventId: cursor }) };
}

async function system(otlp: OtlpReceiver, env: Record<string, string>): Promise<TestSystem> {
  return startTestSystem({
    mode: 'one-process',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100', ...env },
  });
}

describe('the trace of a run', () => {
  let otlp: OtlpReceiver;
  let sys: TestSystem;
  let spans: ReceivedSpan[];
  let frames: EventFrame[];
  let taskId: string;
  /** The test's own clock around the traced run: every span of it lies between. */
  let startedAt = 0;
  let endedAt = 0;

  const one = (name: string, where: (s: ReceivedSpan) => boolean = () => true): ReceivedSpan => {
    const found = spans.filter((s) => s.name === name && where(s));
    expect(found, `${name}: ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
    return found[0]!;
  };
  const byId = (id: string) => spans.find((s) => s.spanId === id);
  /** True when `ancestor` is on the parent chain of `span`. */
  const descends = (span: ReceivedSpan, ancestor: ReceivedSpan): boolean => {
    for (let at = byId(span.parentSpanId); at !== undefined; at = byId(at.parentSpanId)) {
      if (at.spanId === ancestor.spanId) return true;
    }
    return false;
  };

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    // The default encoding, http/protobuf (this package's own encoder); the opted-in content test below uses http/json.
    sys = await system(otlp, {
      OTEL_SERVICE_NAME: 'ars-e2e',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=e2e,service.name=ignored',
      K8S_POD_NAME: 'ars-0',
      K8S_NAMESPACE_NAME: 'agents',
      K8S_NODE_NAME: 'node-a',
    });
    const client = sys.client();
    startedAt = Date.now();
    const run = await startTraced(client, SCRIPT, traceparent('01'));
    taskId = run.taskId;
    await run.log.next('tool.invoked', (f) => f.payload['ToolName'] === 'wait');
    await client.call('inject_context', { identity: { run: taskId }, payload: { note: 'from the test' } });
    await run.log.next('control.applied', (f) => f.payload['Type'] === 'inject_context');
    expect((await run.log.terminal()).type).toBe('task.completed');
    frames = [...run.log.frames];
    await run.log.close();
    spans = await waitFor(
      () => {
        const now = otlp.spans().filter((s) => s.traceId === CALLER_TRACE);
        const ended = now.some((s) => s.name === 'run') && now.some((s) => s.name === 'process task.completed');
        return ended ? now : undefined;
      },
      { message: 'the run span and the session handling its end exported', timeoutMs: 15_000 },
    );
    endedAt = Date.now();
  }, 60_000);

  afterAll(async () => {
    await sys?.stop();
    await otlp?.close();
  });

  it('continues the caller trace: gateway request → run-executor/start → run', () => {
    const request = one('POST /v1/control/start', (s) => s.kind === SPAN_KIND.server);
    expect(request.parentSpanId).toBe(CALLER_SPAN);
    expect(request.attributes['ars.service']).toBe('gateway');
    const served = one('run-executor/start', (s) => s.kind === SPAN_KIND.server);
    expect(descends(served, request)).toBe(true);
    expect(served.attributes['ars.service']).toBe('run-executor');
    const run = one('run');
    expect(descends(run, served)).toBe(true);
    expect(run.scope).toBe('run-executor');
    expect(run.attributes).toMatchObject({
      'ars.service': 'run-executor',
      'ars.task.id': taskId,
      'ars.agent.id': 'default',
      'ars.tenant': 'dev',
      'ars.run.delivery': 1,
    });
  });

  it('has one span per planner step under the run, each with its LLM call', () => {
    const run = one('run');
    const steps = spans.filter((s) => s.name === 'step');
    expect(steps.map((s) => s.attributes['ars.step']).sort()).toEqual([1, 2, 3]);
    for (const step of steps) expect(step.parentSpanId).toBe(run.spanId);
    const calls = spans.filter((s) => s.name.startsWith('chat '));
    expect(calls).toHaveLength(3);
    for (const call of calls) {
      expect(steps.map((s) => s.spanId)).toContain(call.parentSpanId);
      expect(call.kind).toBe(SPAN_KIND.client);
      expect(call.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'scripted',
        'gen_ai.provider.name': 'scripted',
      });
      expect(call.name).toBe(`chat ${String(call.attributes['gen_ai.request.model'])}`);
      expect(call.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(call.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      const first = call.events.find((e) => e.name === 'gen_ai.first_token');
      expect(first?.attributes['gen_ai.response.time_to_first_token']).toBeGreaterThanOrEqual(0);
    }
  });

  it('times every span within the run of the test, and the steps one after another inside the run', () => {
    // The SDK takes a span's start from Date.now() (whole milliseconds) and its end from the
    // performance clock: a span may appear to end up to a millisecond before it started.
    for (const span of spans) {
      expect(span.startMs, span.name).toBeGreaterThanOrEqual(startedAt - 1);
      expect(span.endMs, span.name).toBeLessThanOrEqual(endedAt + 1);
      expect(span.endMs - span.startMs, span.name).toBeGreaterThanOrEqual(-1);
    }
    const run = one('run');
    const steps = spans
      .filter((s) => s.name === 'step')
      .sort((a, b) => Number(a.attributes['ars.step']) - Number(b.attributes['ars.step']));
    for (const [i, step] of steps.entries()) {
      expect(step.startMs).toBeGreaterThanOrEqual(run.startMs - 1);
      expect(step.endMs).toBeLessThanOrEqual(run.endMs + 1);
      if (i > 0) expect(step.startMs).toBeGreaterThanOrEqual(steps[i - 1]!.endMs - 1);
    }
  });

  it('has one span per tool call under its step, and one for the control under the run', () => {
    const step = (n: number) => one('step', (s) => s.attributes['ars.step'] === n);
    const echo = one('execute_tool echo');
    expect(echo.parentSpanId).toBe(step(1).spanId);
    expect(echo.attributes).toMatchObject({ 'gen_ai.tool.name': 'echo', 'ars.tool.outcome': 'completed' });
    expect(one('execute_tool wait').parentSpanId).toBe(step(2).spanId);
    const control = one('control inject_context');
    expect(control.parentSpanId).toBe(one('run').spanId);
    // Linked to the steering request that sent it (its own trace: the test sent no traceparent).
    expect(control.links).toHaveLength(1);
  });

  it("joins the session's handling of the run's events to the trace", () => {
    const consumed = spans.filter((s) => s.kind === SPAN_KIND.consumer && s.attributes['ars.service'] === 'session');
    expect(consumed.map((s) => s.name)).toEqual(
      expect.arrayContaining(['process task.spawned', 'process task.started', 'process task.completed']),
    );
    // task.spawned is published by the start itself, the run's own events under its run span.
    const request = one('POST /v1/control/start');
    for (const span of consumed) expect(descends(span, request), span.name).toBe(true);
    expect(descends(one('process task.completed'), one('run'))).toBe(true);
    expect(descends(one('process task.started'), one('run'))).toBe(true);
  });

  it('records no prompt, tool argument or answer text', () => {
    expect(JSON.stringify(spans)).not.toContain(SECRET);
  });

  it('gives every SSE frame of the run the trace id', () => {
    expect(frames.length).toBeGreaterThan(5);
    for (const frame of frames) expect(frame.trace_id, frame.type).toBe(CALLER_TRACE);
  });

  it('exports the resource of the standard variables, the detectors and the downward API', () => {
    const resource = one('run').resource;
    expect(resource).toMatchObject({
      'service.name': 'ars-e2e',
      'service.version': '0.1.0',
      'deployment.environment.name': 'e2e',
      'k8s.pod.name': 'ars-0',
      'k8s.namespace.name': 'agents',
      'k8s.node.name': 'node-a',
      'process.runtime.name': 'nodejs',
    });
    expect(resource['service.instance.id']).toEqual(expect.any(String));
    expect(resource['host.name']).toEqual(expect.any(String));
    expect(resource['process.pid']).toEqual(expect.any(Number));
  });
});

describe('sampling from OTEL_TRACES_SAMPLER', () => {
  let otlp: OtlpReceiver;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
  });

  afterAll(async () => {
    await otlp?.close();
  });

  /** Runs one scripted run per parent on a system of `env`, then stops it (flushing every span). */
  async function runAll(env: Record<string, string>, parents: readonly (string | undefined)[]): Promise<void> {
    const sys = await system(otlp, env);
    try {
      for (const parent of parents) {
        const run = await startTraced(sys.client(), '#script tool:echo{"n":1};finish:done', parent);
        expect((await run.log.terminal()).type).toBe('task.completed');
        await run.log.close();
      }
    } finally {
      await sys.stop();
    }
  }

  it('records nothing with traceidratio 0, even under a sampled parent', async () => {
    const before = otlp.bodies.length;
    await runAll({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, [undefined, traceparent('01')]);
    expect(otlp.bodies.slice(before)).toEqual([]);
  }, 60_000);

  it('follows a sampled parent and drops an unsampled one with parentbased_traceidratio 0, over http/protobuf', async () => {
    const sampled = '0af7651916cd43dd8448eb211c80319c';
    const before = otlp.bodies.length;
    await runAll({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, [
      traceparent('01', sampled),
      undefined,
      traceparent('00', 'ffe4e1a1b2c3d4e5f60718293a4b5c6d'),
    ]);
    const bodies = otlp.bodies.slice(before);
    expect(bodies.length).toBeGreaterThan(0);
    for (const body of bodies) expect(body.type).toContain('application/x-protobuf');
    const all = Buffer.concat(bodies.map((b) => b.bytes));
    // A protobuf span carries its trace id as 16 raw bytes: the sampled one's are there, the others' not.
    expect(all.includes(Buffer.from(sampled, 'hex'))).toBe(true);
    expect(all.includes(Buffer.from('ffe4e1a1b2c3d4e5f60718293a4b5c6d', 'hex'))).toBe(false);
    expect(all.includes(Buffer.from('run-executor'))).toBe(true);
  }, 60_000);
});

describe('prompt and answer content on LLM spans, opted in', () => {
  let otlp: OtlpReceiver;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
  });

  afterAll(async () => {
    await otlp?.close();
  });

  it('puts the prompt and the answer on each chat span with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true', async () => {
    const trace = 'c0ffee0000000000000000000000beef';
    const sys = await system(otlp, {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    });
    try {
      const run = await startTraced(
        sys.client(),
        `#script tool:echo{"text":"${SECRET}"};finish:${SECRET}`,
        traceparent('01', trace),
      );
      expect((await run.log.terminal()).type).toBe('task.completed');
      await run.log.close();
    } finally {
      await sys.stop();
    }
    const calls = otlp.spans().filter((s) => s.traceId === trace && s.name.startsWith('chat '));
    expect(calls).toHaveLength(2);
    const json = (span: ReceivedSpan, key: string) => JSON.parse(String(span.attributes[key])) as unknown;
    for (const call of calls) {
      expect(json(call, 'gen_ai.system_instructions')).toEqual([{ type: 'text', content: expect.any(String) }]);
      expect(json(call, 'gen_ai.input.messages')).toEqual(
        expect.arrayContaining([
          { role: 'user', parts: expect.arrayContaining([expect.objectContaining({ type: 'text' })]) },
        ]),
      );
    }
    const [first, second] = [...calls].sort((a, b) =>
      String(a.attributes['ars.llm.call_id']).localeCompare(String(b.attributes['ars.llm.call_id'])),
    );
    expect(json(first!, 'gen_ai.output.messages')).toEqual([
      {
        role: 'assistant',
        finish_reason: 'tool_call',
        parts: expect.arrayContaining([
          expect.objectContaining({ type: 'tool_call', name: 'echo', arguments: { text: SECRET } }),
        ]),
      },
    ]);
    expect(json(second!, 'gen_ai.output.messages')).toEqual([
      { role: 'assistant', finish_reason: 'stop', parts: expect.arrayContaining([{ type: 'text', content: SECRET }]) },
    ]);
    // The second call was given the first's tool call and its result.
    const given = JSON.stringify(json(second!, 'gen_ai.input.messages'));
    expect(given).toContain('"type":"tool_call_response"');
  }, 60_000);
});
