import { describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { extractTraceContext, initTelemetry, injectTraceContext, withSpan } from '../src/index.ts';

describe('trace propagation', () => {
  initTelemetry({ serviceName: 'propagation-test' });

  it('keeps the trace id through inject and extract', async () => {
    const carrier = new Map<string, string>();
    const sent = await withSpan('client', {}, async (span) => {
      injectTraceContext((key, value) => carrier.set(key, value));
      return span.spanContext();
    });
    expect(carrier.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    const parent = extractTraceContext((key) => carrier.get(key));
    expect(trace.getSpanContext(parent)?.traceId).toBe(sent.traceId);
    const child = await withSpan('server', { parent }, async (span) => span.spanContext());
    expect(child.traceId).toBe(sent.traceId);
  });

  it('writes nothing outside a span', () => {
    const carrier = new Map<string, string>();
    injectTraceContext((key, value) => carrier.set(key, value));
    expect(carrier.size).toBe(0);
  });

  it('starts a new trace when the carrier has no traceparent', () => {
    const parent = extractTraceContext(() => undefined);
    expect(trace.getSpanContext(parent)).toBeUndefined();
  });
});
