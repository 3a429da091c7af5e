import { describe, expect, it } from 'vitest';
import { isSpanContextValid, ROOT_CONTEXT } from '@opentelemetry/api';
import {
  context,
  extractTraceContext,
  initTelemetry,
  injectTraceContext,
  startSpan,
  trace,
  tracingActive,
  withSpan,
} from '../src/index.ts';

// Its own file: the tracer provider is per process, and here no exporter is ever added.
describe('withSpan without an exporter', () => {
  const telemetry = initTelemetry({ serviceName: 'spans-inactive-test' });
  const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  it('reports tracing inactive while nothing exports spans', () => {
    expect(tracingActive()).toBe(false);
  });

  it('makes no span but carries a remote parent to the next hop', async () => {
    const parent = extractTraceContext((key) => (key === 'traceparent' ? traceparent : undefined));
    const seen = await withSpan('server', { parent }, async (span) => {
      const headers: Record<string, string> = {};
      await withSpan('client', {}, async () => injectTraceContext((key, value) => (headers[key] = value)));
      return { span: span.spanContext(), headers };
    });
    expect(seen.span.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(seen.span.spanId).toBe('b7ad6b7169203331');
    expect(seen.headers.traceparent).toBe(traceparent);
  });

  it('starts a fresh trace at a root, in a span that records nothing', async () => {
    const seen = await withSpan('root', { parent: ROOT_CONTEXT }, async (span) => {
      const headers: Record<string, string> = {};
      await withSpan('client', {}, async () => injectTraceContext((key, value) => (headers[key] = value)));
      return { context: span.spanContext(), recording: span.isRecording(), headers };
    });
    expect(isSpanContextValid(seen.context)).toBe(true);
    expect(seen.recording).toBe(false);
    expect(seen.headers.traceparent).toBe(`00-${seen.context.traceId}-${seen.context.spanId}-01`);
    const other = await withSpan('another root', {}, async (span) => span.spanContext().traceId);
    expect(other).not.toBe(seen.context.traceId);
  });

  it('startSpan makes no span: the span of the remote parent travels, and attributes and end do nothing', () => {
    const parent = extractTraceContext((key) => (key === 'traceparent' ? traceparent : undefined));
    const span = startSpan('POST /v1/x', { parent });
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext()).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
    });
    expect(span).toBe(trace.getSpan(parent));
    span.setAttribute('a', 1);
    span.end();
    const headers: Record<string, string> = {};
    context.with(trace.setSpan(parent, span), () => injectTraceContext((key, value) => (headers[key] = value)));
    expect(headers.traceparent).toBe(traceparent);
  });

  it('startSpan at a root gives a fresh trace in a span that records nothing', () => {
    const first = startSpan('root', { parent: ROOT_CONTEXT });
    const second = startSpan('root', { parent: ROOT_CONTEXT });
    expect(first.isRecording()).toBe(false);
    expect(isSpanContextValid(first.spanContext())).toBe(true);
    expect(second.spanContext().traceId).not.toBe(first.spanContext().traceId);
  });

  it('still rethrows what fn throws', async () => {
    const boom = new Error('boom');
    await expect(withSpan('failing', {}, async () => Promise.reject(boom))).rejects.toBe(boom);
  });

  it('records again once an exporter is added', async () => {
    const { InMemorySpanExporter } = await import('../src/index.ts');
    const exporter = new InMemorySpanExporter();
    const withExporter = initTelemetry({ serviceName: 'spans-inactive-test-2', exporter });
    expect(tracingActive()).toBe(true);
    await withSpan('recorded', {}, async () => undefined);
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['recorded']);
    await withExporter.shutdown();
    expect(tracingActive()).toBe(false);
    await telemetry.shutdown();
  });
});
