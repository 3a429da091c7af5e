import { trace } from '@opentelemetry/api';
import type { Context, Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-node';

/** What {@link initTelemetry} needs; the caller reads its environment, never this module. */
export interface TelemetryOptions {
  /** `service.name` of the resource and the name of the returned tracer. */
  readonly serviceName: string;
  /**
   * Base URL of an OTLP/HTTP collector (for example `http://otel:4318`); spans are
   * batched to `<otlpEndpoint>/v1/traces`. A URL already ending in `/v1/traces` is
   * used as is. Omitted: no OTLP export.
   */
  readonly otlpEndpoint?: string;
  /**
   * An extra exporter fed synchronously (one span at a time, on end), so that
   * tests can read finished spans from an `InMemorySpanExporter` without waiting.
   */
  readonly exporter?: SpanExporter;
}

/** The handle returned by {@link initTelemetry}. */
export interface Telemetry {
  readonly tracer: Tracer;
  /** Flushes and shuts down the exporters this call added; the global provider stays. */
  shutdown(): Promise<void>;
}

/**
 * Fans spans out to a set of processors that changes over time, so that one
 * globally registered provider serves every `initTelemetry` call in a process.
 */
class FanOutProcessor implements SpanProcessor {
  readonly #processors = new Set<SpanProcessor>();

  add(processor: SpanProcessor): void {
    this.#processors.add(processor);
  }

  delete(processor: SpanProcessor): void {
    this.#processors.delete(processor);
  }

  onStart(span: Span, parentContext: Context): void {
    for (const p of this.#processors) p.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    for (const p of this.#processors) p.onEnd(span);
  }

  /** True while at least one processor (an exporter) receives spans. */
  get active(): boolean {
    return this.#processors.size > 0;
  }

  async forceFlush(): Promise<void> {
    await Promise.all([...this.#processors].map((p) => p.forceFlush()));
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.#processors].map((p) => p.shutdown()));
  }
}

interface Registration {
  readonly provider: NodeTracerProvider;
  readonly fanOut: FanOutProcessor;
}

let registration: Registration | undefined;

function register(serviceName: string): Registration {
  const fanOut = new FanOutProcessor();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [fanOut],
  });
  // The default context manager of NodeTracerProvider is AsyncLocalStorage.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return { provider, fanOut };
}

/**
 * True when some exporter receives spans in this process. Without one, a
 * span is work nobody reads: {@link withSpan} then only carries the trace
 * context along (measured: creating, activating and ending the spans of
 * every RPC took a fifth of the run path's CPU).
 */
export function tracingActive(): boolean {
  return registration?.fanOut.active === true;
}

function otlpUrl(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, '');
  return trimmed.endsWith('/v1/traces') ? trimmed : `${trimmed}/v1/traces`;
}

/**
 * Sets up tracing for this process: a NodeTracerProvider with the
 * AsyncLocalStorage context manager and the W3C trace-context propagator,
 * registered globally on the first call. Later calls (tests start several
 * services in one process) reuse that provider, whose resource keeps the first
 * `serviceName`, and only add their exporters to it.
 */
export function initTelemetry(options: TelemetryOptions): Telemetry {
  registration ??= register(options.serviceName);
  const { fanOut } = registration;
  const added: SpanProcessor[] = [];
  const endpoint =
    options.otlpEndpoint === undefined || options.otlpEndpoint === '' ? undefined : otlpUrl(options.otlpEndpoint);
  if (endpoint !== undefined) acquireOtlp(fanOut, endpoint);
  if (options.exporter !== undefined) added.push(new SimpleSpanProcessor(options.exporter));
  for (const p of added) fanOut.add(p);

  let stopped = false;
  return {
    tracer: trace.getTracer(options.serviceName),
    async shutdown(): Promise<void> {
      if (stopped) return;
      stopped = true;
      for (const p of added) fanOut.delete(p);
      await Promise.all([
        ...added.map((p) => p.shutdown()),
        endpoint === undefined ? undefined : releaseOtlp(fanOut, endpoint),
      ]);
    },
  };
}

/**
 * One OTLP exporter per endpoint and process, shared by every service that
 * names it: in the one-process mode seven services would otherwise export
 * each span seven times. The last one to shut down flushes it.
 */
const otlpExporters = new Map<string, { readonly processor: SpanProcessor; users: number }>();

function acquireOtlp(fanOut: FanOutProcessor, url: string): void {
  const shared = otlpExporters.get(url);
  if (shared !== undefined) {
    shared.users++;
    return;
  }
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url }));
  otlpExporters.set(url, { processor, users: 1 });
  fanOut.add(processor);
}

async function releaseOtlp(fanOut: FanOutProcessor, url: string): Promise<void> {
  const shared = otlpExporters.get(url);
  if (shared === undefined || --shared.users > 0) return;
  otlpExporters.delete(url);
  fanOut.delete(shared.processor);
  await shared.processor.shutdown();
}
