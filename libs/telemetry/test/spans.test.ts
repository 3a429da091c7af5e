import { afterAll, describe, expect, it } from 'vitest';
import { SpanStatusCode } from '@opentelemetry/api';
import {
  extractTraceContext,
  InMemorySpanExporter,
  initTelemetry,
  SpanKind,
  startSpan,
  withSpan,
} from '../src/index.ts';

describe('withSpan', () => {
  const exporter = new InMemorySpanExporter();
  const telemetry = initTelemetry({ serviceName: 'spans-test', exporter });
  afterAll(() => telemetry.shutdown());

  it('records an error on the span and rethrows it unchanged', async () => {
    const boom = new Error('boom');
    await expect(withSpan('failing', {}, async () => Promise.reject(boom))).rejects.toBe(boom);
    const span = exporter.getFinishedSpans().find((s) => s.name === 'failing');
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'boom' });
    expect(span?.events.map((e) => e.name)).toContain('exception');
  });

  it('returns the result and ends the span with its kind and attributes', async () => {
    const result = await withSpan('ok', { kind: SpanKind.CLIENT, attributes: { a: 1 } }, async () => 42);
    expect(result).toBe(42);
    const span = exporter.getFinishedSpans().find((s) => s.name === 'ok');
    expect(span?.kind).toBe(SpanKind.CLIENT);
    expect(span?.attributes).toMatchObject({ a: 1 });
    expect(span?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('starts a span the caller ends, under the given parent, with its kind and tracer', () => {
    const parent = extractTraceContext((key) =>
      key === 'traceparent' ? '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' : undefined,
    );
    const span = startSpan('POST /v1/x', { kind: SpanKind.SERVER, parent, attributes: { b: 2 } }, '@ars/test');
    expect(span.isRecording()).toBe(true);
    expect(exporter.getFinishedSpans().find((s) => s.name === 'POST /v1/x')).toBeUndefined();
    span.end();
    const ended = exporter.getFinishedSpans().find((s) => s.name === 'POST /v1/x');
    expect(ended?.kind).toBe(SpanKind.SERVER);
    expect(ended?.attributes).toMatchObject({ b: 2 });
    expect(ended?.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(ended?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(ended?.instrumentationScope.name).toBe('@ars/test');
  });

  it('records no span with record: false, and runs the function in the active trace', async () => {
    const { outer, seen } = await withSpan('probe-parent', {}, async (parent) => ({
      outer: parent.spanContext(),
      seen: await withSpan('probe', { record: false }, async (span) => span.spanContext()),
    }));
    expect(seen).toEqual(outer);
    expect(exporter.getFinishedSpans().find((s) => s.name === 'probe')).toBeUndefined();
  });

  it('nests a span under the active one', async () => {
    const ids = await withSpan('outer', {}, async (outer) =>
      withSpan('inner', {}, async (inner) => ({ outer: outer.spanContext(), inner: inner.spanContext() })),
    );
    expect(ids.inner.traceId).toBe(ids.outer.traceId);
    const inner = exporter.getFinishedSpans().find((s) => s.name === 'inner');
    expect(inner?.parentSpanContext?.spanId).toBe(ids.outer.spanId);
  });

  it('survives a second initTelemetry in the same process', async () => {
    const second = new InMemorySpanExporter();
    const again = initTelemetry({ serviceName: 'spans-test-2', exporter: second });
    await withSpan('after-second-init', {}, async () => undefined);
    expect(second.getFinishedSpans().map((s) => s.name)).toEqual(['after-second-init']);
    expect(exporter.getFinishedSpans().map((s) => s.name)).toContain('after-second-init');
    await again.shutdown();
    await withSpan('after-second-shutdown', {}, async () => undefined);
    expect(exporter.getFinishedSpans().map((s) => s.name)).toContain('after-second-shutdown');
  });

  it('accepts an OTLP endpoint and shuts its exporter down cleanly', async () => {
    const otlp = initTelemetry({ serviceName: 'spans-test-otlp', otlpEndpoint: 'http://127.0.0.1:4318/' });
    await expect(otlp.shutdown()).resolves.toBeUndefined();
    await expect(otlp.shutdown()).resolves.toBeUndefined();
  });
});
