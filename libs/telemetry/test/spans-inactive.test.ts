import { describe, expect, it } from 'vitest';
import { isSpanContextValid, ROOT_CONTEXT } from '@opentelemetry/api';
import { extractTraceContext, initTelemetry, injectTraceContext, tracingActive, withSpan } from '../src/index.ts';

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
