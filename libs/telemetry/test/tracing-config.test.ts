import { afterAll, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, TraceFlags } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  SERVICE_SPAN_ATTRIBUTE,
  buildResource,
  createSampler,
  extractTraceContext,
  initTelemetry,
  injectTraceContext,
  otlpTracesUrl,
  parseKeyValueList,
  tracingActive,
  withSpan,
} from '../src/index.ts';

// Its own file: the tracer provider (and its sampler) is per process.
describe('the sampler of OTEL_TRACES_SAMPLER', () => {
  const sampled = (name: Parameters<typeof createSampler>[0]['name'], ratio?: number, parentFlags?: number) => {
    const parent =
      parentFlags === undefined
        ? ROOT_CONTEXT
        : extractTraceContext((key) =>
            key === 'traceparent' ? `00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0${parentFlags}` : undefined,
          );
    const sampler = createSampler(ratio === undefined ? { name } : { name, ratio });
    return sampler.shouldSample(parent, 'ffffffffffffffffffffffffffffffff', 'x', 0, {}, []).decision;
  };

  it('always_on and always_off ignore the parent', () => {
    expect(sampled('always_on', undefined, TraceFlags.NONE)).toBe(2);
    expect(sampled('always_off', undefined, TraceFlags.SAMPLED)).toBe(0);
  });

  it('traceidratio 0 records no trace, even under a sampled parent; 1 records every one', () => {
    expect(sampled('traceidratio', 0, TraceFlags.SAMPLED)).toBe(0);
    expect(sampled('traceidratio', 1)).toBe(2);
  });

  it('parentbased_* follow the parent and apply their root sampler to a root only', () => {
    expect(sampled('parentbased_traceidratio', 0, TraceFlags.SAMPLED)).toBe(2);
    expect(sampled('parentbased_traceidratio', 1, TraceFlags.NONE)).toBe(0);
    expect(sampled('parentbased_traceidratio', 0)).toBe(0);
    expect(sampled('parentbased_always_on')).toBe(2);
    expect(sampled('parentbased_always_off')).toBe(0);
    expect(sampled('parentbased_always_off', undefined, TraceFlags.SAMPLED)).toBe(2);
  });
});

describe('spans of several services in one process', () => {
  const exporter = new InMemorySpanExporter();
  const telemetry = initTelemetry({ serviceName: 'tracing-config-test', exporter });
  afterAll(() => telemetry.shutdown());

  it('names the service in ars.service and the tracer, and a library span inherits it from its local parent', async () => {
    await withSpan('handle', { service: 'session' }, () => withSpan('publish x', {}, async () => undefined));
    const spans = exporter.getFinishedSpans();
    const handle = spans.find((s) => s.name === 'handle');
    const publish = spans.find((s) => s.name === 'publish x');
    expect(handle?.attributes[SERVICE_SPAN_ATTRIBUTE]).toBe('session');
    expect(handle?.instrumentationScope.name).toBe('session');
    expect(publish?.attributes[SERVICE_SPAN_ATTRIBUTE]).toBe('session');
    expect(publish?.parentSpanContext?.spanId).toBe(handle?.spanContext().spanId);
  });

  it('makes no span at all with always_off, and asks the next hop not to record either', async () => {
    initTelemetry({ serviceName: 'off', sampler: { name: 'always_off' } });
    try {
      expect(tracingActive()).toBe(false);
      const before = exporter.getFinishedSpans().length;
      const headers: Record<string, string> = {};
      await withSpan('root', { parent: ROOT_CONTEXT }, async () =>
        injectTraceContext((key, value) => (headers[key] = value)),
      );
      expect(exporter.getFinishedSpans()).toHaveLength(before);
      expect(headers.traceparent).toMatch(/-00$/);
    } finally {
      initTelemetry({ serviceName: 'on', sampler: { name: 'parentbased_always_on' } });
    }
    expect(tracingActive()).toBe(true);
  });
});

describe('the resource', () => {
  it('layers detected host and process, the service, Kubernetes, OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME', () => {
    const resource = buildResource({
      serviceName: 'gateway',
      serviceVersion: '1.2.3',
      instanceId: 'gateway-7f',
      k8s: { podName: 'gw-0', namespaceName: 'ars', nodeName: 'n1' },
      attributes: { 'service.name': 'from-attributes', 'service.version': '9.9.9', team: 'agents' },
      serviceNameOverride: 'ars-gateway',
    });
    expect(resource.attributes).toMatchObject({
      'service.name': 'ars-gateway',
      'service.version': '9.9.9',
      'service.instance.id': 'gateway-7f',
      'k8s.pod.name': 'gw-0',
      'k8s.namespace.name': 'ars',
      'k8s.node.name': 'n1',
      team: 'agents',
      'process.pid': process.pid,
      'process.runtime.name': 'nodejs',
    });
    expect(resource.attributes['host.name']).toEqual(expect.any(String));
  });

  it('keeps the service name without an override, and leaves out what was not given', () => {
    const resource = buildResource({ serviceName: 'session', detectors: false });
    expect(resource.attributes).toEqual({ 'service.name': 'session' });
  });
});

describe('parseKeyValueList (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS)', () => {
  it('splits members, trims blanks and percent-decodes values', () => {
    expect(parseKeyValueList(' a=1 , b = two%20words,,api-key=x%3Dy ')).toEqual({
      a: '1',
      b: 'two words',
      'api-key': 'x=y',
    });
  });

  it('names a member without =, an empty key and a bad escape', () => {
    expect(parseKeyValueList('a=1,b')).toEqual({ problem: '"b" is not key=value' });
    expect(parseKeyValueList('=1')).toHaveProperty('problem');
    expect(parseKeyValueList('a=%zz')).toEqual({ problem: 'the value of a is not percent-encoded correctly' });
  });
});

describe('otlpTracesUrl', () => {
  it('appends /v1/traces to the base endpoint, and takes the traces endpoint as it is', () => {
    expect(otlpTracesUrl({ otlpEndpoint: 'http://otel:4318/' })).toBe('http://otel:4318/v1/traces');
    expect(otlpTracesUrl({ otlpEndpoint: 'http://otel:4318/v1/traces' })).toBe('http://otel:4318/v1/traces');
    expect(
      otlpTracesUrl({ otlpEndpoint: 'http://otel:4318', otlpTracesEndpoint: 'http://tempo:4318/otlp/traces' }),
    ).toBe('http://tempo:4318/otlp/traces');
    expect(otlpTracesUrl({})).toBeUndefined();
  });
});
