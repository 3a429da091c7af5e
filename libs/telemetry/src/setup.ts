import { trace } from '@opentelemetry/api';
import type { Attributes, Context, Link, SpanKind, Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type * as OtlpJsonTraces from '@opentelemetry/exporter-trace-otlp-http';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import type {
  ReadableSpan,
  Sampler,
  SamplingResult,
  Span,
  SpanExporter,
  SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { OtlpSpanStreamProcessor } from './otlp-span-stream.ts';
import { requireOnce } from './require-once.ts';
import { flushBeforeStop } from './stop-flush.ts';
import { buildResource } from './resource.ts';
import type { ResourceOptions } from './resource.ts';

/** The span attribute naming the service a span belongs to (one process may hold seven). */
export const SERVICE_SPAN_ATTRIBUTE = 'ars.service';

/** The samplers of `OTEL_TRACES_SAMPLER` this package implements (the OTel specification's built-ins). */
export const SAMPLER_NAMES = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLER_NAMES)[number];

/** The values of {@link TelemetryOptions.rpcClientSpans}. */
export const RPC_CLIENT_SPANS = ['errors', 'all'] as const;
export type RpcClientSpans = (typeof RPC_CLIENT_SPANS)[number];

/** The OTLP/HTTP encodings of `OTEL_EXPORTER_OTLP_PROTOCOL` (gRPC is not offered). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** A sampler as `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` give it. */
export interface SamplerOptions {
  readonly name: SamplerName;
  /** The ratio of the `*traceidratio` samplers, 0 to 1. @default 1 */
  readonly ratio?: number;
}

/** What {@link initTelemetry} needs; the caller reads its environment, never this module. */
export interface TelemetryOptions {
  /** The name of the returned tracer and the {@link SERVICE_SPAN_ATTRIBUTE} of its spans. */
  readonly serviceName: string;
  /**
   * The process resource; read by the first call of the process only (the
   * provider is global). @default `service.name` = serviceName, host and process detectors
   */
  readonly resource?: Omit<ResourceOptions, 'serviceName'> & { readonly serviceName?: string };
  /** The sampler (the latest call that gives one sets it). @default parentbased_always_on */
  readonly sampler?: SamplerOptions;
  /**
   * Base URL of an OTLP/HTTP collector (`OTEL_EXPORTER_OTLP_ENDPOINT`, e.g.
   * `http://otel:4318`); spans are batched to `<otlpEndpoint>/v1/traces`.
   * Omitted (and no `otlpTracesEndpoint`): no OTLP export.
   */
  readonly otlpEndpoint?: string;
  /** Full URL of the traces endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), used as is; wins over `otlpEndpoint`. */
  readonly otlpTracesEndpoint?: string;
  /** @default 'http/protobuf' (the OTel specification's default) */
  readonly otlpProtocol?: OtlpProtocol;
  /** Headers of every export request (`OTEL_EXPORTER_OTLP_HEADERS`, e.g. an API key). */
  readonly otlpHeaders?: Readonly<Record<string, string>>;
  /** Delay between two batch exports, in ms (`OTEL_BSP_SCHEDULE_DELAY`). @default 5000 */
  readonly exportDelayMs?: number;
  /**
   * Which RPC calls get a CLIENT span of their own (`ARS_TRACE_RPC_CLIENT_SPANS`;
   * the latest call that gives one sets it): `all`, or `errors`, where a call
   * makes one only when it fails (a timeout, no responder, a refusal) and the
   * answering service's SERVER span is the child of the caller's span. A run
   * makes about a dozen internal calls: their client spans were a quarter of
   * its spans. @default 'errors'
   */
  readonly rpcClientSpans?: RpcClientSpans;
  /**
   * An extra exporter fed synchronously (one span at a time, on end), so that
   * tests can read finished spans from an `InMemorySpanExporter` without waiting.
   */
  readonly exporter?: SpanExporter;
}

/** The handle returned by {@link initTelemetry}. */
export interface Telemetry {
  /** The service's tracer (named after it). */
  readonly tracer: Tracer;
  /** Flushes and shuts down the exporters this call added; the global provider stays. */
  shutdown(): Promise<void>;
}

/** The local parent of a span about to start: the SDK span of `parentContext`, when it is one of this process. */
function localParentService(parentContext: Context): unknown {
  const parent = trace.getSpan(parentContext) as Partial<ReadableSpan> | undefined;
  return parent?.attributes?.[SERVICE_SPAN_ATTRIBUTE];
}

/**
 * Fans spans out to a set of processors that changes over time, so that one
 * globally registered provider serves every `initTelemetry` call in a
 * process. A span started without {@link SERVICE_SPAN_ATTRIBUTE} takes its
 * local parent's, so that a library's span (an RPC client call, a publish)
 * names the service it ran for.
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
    if (span.attributes[SERVICE_SPAN_ATTRIBUTE] === undefined) {
      const service = localParentService(parentContext);
      if (typeof service === 'string') span.setAttribute(SERVICE_SPAN_ATTRIBUTE, service);
    }
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

/** The sampler of `OTEL_TRACES_SAMPLER`. */
export function createSampler(options: SamplerOptions): Sampler {
  const ratio = Math.min(1, Math.max(0, options.ratio ?? 1));
  switch (options.name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

/** A sampler whose delegate a later {@link initTelemetry} may replace (the provider keeps the one it was given). */
class SwitchableSampler implements Sampler {
  delegate: Sampler = createSampler({ name: 'parentbased_always_on' });
  /** True when the delegate records nothing whatever the parent: spans would be work for nothing. */
  off = false;

  shouldSample(
    context: Context,
    traceId: string,
    spanName: string,
    spanKind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    return this.delegate.shouldSample(context, traceId, spanName, spanKind, attributes, links);
  }

  toString(): string {
    return this.delegate.toString();
  }
}

interface Registration {
  readonly provider: NodeTracerProvider;
  readonly fanOut: FanOutProcessor;
  readonly sampler: SwitchableSampler;
  rpcClientSpans: RpcClientSpans;
}

let registration: Registration | undefined;

function register(options: TelemetryOptions): Registration {
  const fanOut = new FanOutProcessor();
  const sampler = new SwitchableSampler();
  const { serviceName = options.serviceName, ...resource } = options.resource ?? {};
  const provider = new NodeTracerProvider({
    resource: buildResource({ ...resource, serviceName }),
    sampler,
    spanProcessors: [fanOut],
  });
  // The default context manager of NodeTracerProvider is AsyncLocalStorage.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return { provider, fanOut, sampler, rpcClientSpans: 'errors' };
}

/**
 * True when some exporter receives spans in this process and the sampler
 * may record some. Otherwise a span is work nobody reads: {@link withSpan}
 * then only carries the trace context along (measured: creating,
 * activating and ending the spans of every RPC took a fifth of the run
 * path's CPU).
 */
export function tracingActive(): boolean {
  return registration !== undefined && registration.fanOut.active && !registration.sampler.off;
}

/** True when every RPC call gets a CLIENT span ({@link TelemetryOptions.rpcClientSpans} `all`) and spans are recorded. */
export function tracingRpcClients(): boolean {
  return registration?.rpcClientSpans === 'all' && tracingActive();
}

/**
 * Whether a root started while nothing records should still ask the next
 * hops to sample (`traceparent` flag 01): yes, unless the sampler is
 * `always_off`, whose process asks nobody to record its traces.
 */
export function carrierSampled(): boolean {
  return registration?.sampler.off !== true;
}

/** The traces URL: the signal's own endpoint as is, else `<base>/v1/traces`; undefined without either. */
export function otlpTracesUrl(
  options: Pick<TelemetryOptions, 'otlpEndpoint' | 'otlpTracesEndpoint'>,
): string | undefined {
  if (options.otlpTracesEndpoint !== undefined && options.otlpTracesEndpoint !== '') return options.otlpTracesEndpoint;
  if (options.otlpEndpoint === undefined || options.otlpEndpoint === '') return undefined;
  const trimmed = options.otlpEndpoint.replace(/\/+$/, '');
  return trimmed.endsWith('/v1/traces') ? trimmed : `${trimmed}/v1/traces`;
}

/**
 * Sets up tracing for a service of this process: a NodeTracerProvider with
 * the AsyncLocalStorage context manager and the W3C trace-context
 * propagator, registered globally on the first call, whose resource that
 * call decides. Later calls (the services of a one-process system, tests)
 * reuse that provider, set the sampler when they give one, and add their
 * exporters to it.
 */
export function initTelemetry(options: TelemetryOptions): Telemetry {
  registration ??= register(options);
  const { fanOut, sampler } = registration;
  if (options.sampler !== undefined) {
    sampler.delegate = createSampler(options.sampler);
    sampler.off = options.sampler.name === 'always_off';
  }
  if (options.rpcClientSpans !== undefined) registration.rpcClientSpans = options.rpcClientSpans;
  const added: SpanProcessor[] = [];
  const url = otlpTracesUrl(options);
  const key =
    url === undefined
      ? undefined
      : acquireOtlp(fanOut, url, {
          protocol: options.otlpProtocol ?? 'http/protobuf',
          headers: options.otlpHeaders,
          delayMs: options.exportDelayMs,
        });
  if (options.exporter !== undefined) added.push(new SimpleSpanProcessor(options.exporter));
  for (const p of added) fanOut.add(p);

  let stopped = false;
  return {
    tracer: trace.getTracer(options.serviceName),
    async shutdown(): Promise<void> {
      if (stopped) return;
      stopped = true;
      for (const p of added) fanOut.delete(p);
      await Promise.all([...added.map((p) => p.shutdown()), key === undefined ? undefined : releaseOtlp(fanOut, key)]);
    },
  };
}

/**
 * Spans per OTLP/JSON export request (the SDK's default is 512). A finished
 * span waits in the batch processor's queue until a batch is full; smaller
 * batches send it sooner, so that fewer spans outlive a young-generation
 * collection (`ars up` runs with a 16 MiB semi-space) and get promoted. The
 * protobuf export has no such queue ({@link OtlpSpanStreamProcessor}).
 */
const JSON_EXPORT_BATCH_SPANS = 64;

/**
 * One OTLP exporter per endpoint, protocol and headers in a process, shared
 * by every service that names it: in the one-process mode seven services
 * would otherwise export each span seven times. The last one to shut down
 * flushes it.
 */
const otlpExporters = new Map<string, { readonly processor: SpanProcessor; users: number }>();

/** The SDK's OTLP/JSON trace exporter, loaded by the first process that exports in that encoding. */
const otlpJsonTraces = requireOnce<typeof OtlpJsonTraces>('@opentelemetry/exporter-trace-otlp-http');

interface OtlpSettings {
  readonly protocol: OtlpProtocol;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly delayMs: number | undefined;
}

function acquireOtlp(fanOut: FanOutProcessor, url: string, { protocol, headers, delayMs }: OtlpSettings): string {
  const key = JSON.stringify([url, protocol, headers ?? {}]);
  const shared = otlpExporters.get(key);
  if (shared !== undefined) {
    shared.users++;
    return key;
  }
  const processor =
    protocol === 'http/json'
      ? new BatchSpanProcessor(
          new (otlpJsonTraces().OTLPTraceExporter)({
            url,
            ...(headers === undefined ? {} : { headers: { ...headers } }),
          }),
          {
            maxExportBatchSize: JSON_EXPORT_BATCH_SPANS,
            ...(delayMs === undefined ? {} : { scheduledDelayMillis: delayMs }),
          },
        )
      : new OtlpSpanStreamProcessor({
          url,
          ...(headers === undefined ? {} : { headers }),
          ...(delayMs === undefined ? {} : { delayMs }),
        });
  otlpExporters.set(key, { processor, users: 1 });
  fanOut.add(processor);
  return key;
}

async function releaseOtlp(fanOut: FanOutProcessor, key: string): Promise<void> {
  const shared = otlpExporters.get(key);
  if (shared === undefined || --shared.users > 0) return;
  otlpExporters.delete(key);
  fanOut.delete(shared.processor);
  await flushBeforeStop('OTLP trace export', shared.processor.shutdown());
}
