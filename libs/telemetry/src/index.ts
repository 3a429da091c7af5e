/**
 * @ars/telemetry: tracing (OpenTelemetry, W3C trace context) and structured
 * logs (pino) with trace ids on every line, and metrics (one MeterProvider per
 * process, pre-bound instruments, Prometheus text and OTLP export). Configuration is passed in; this
 * package never reads the environment.
 */
export {
  OTLP_PROTOCOLS,
  RPC_CLIENT_SPANS,
  SAMPLER_NAMES,
  SERVICE_SPAN_ATTRIBUTE,
  createSampler,
  initTelemetry,
  otlpTracesUrl,
  tracingActive,
  tracingRpcClients,
} from './setup.ts';
export type {
  OtlpProtocol,
  RpcClientSpans,
  SamplerName,
  SamplerOptions,
  Telemetry,
  TelemetryOptions,
} from './setup.ts';
export { buildResource, parseKeyValueList } from './resource.ts';
export type { ResourceOptions } from './resource.ts';
export { createLogger, createMemoryLogger } from './logger.ts';
export {
  DIAG_REPEAT_WINDOW_MS,
  diagLoggerFor,
  reportTelemetryProblems,
  stopReportingTelemetryProblems,
} from './diag-logger.ts';
export type { DiagReportOptions } from './diag-logger.ts';
export type { Logger, LoggerOptions, LogLevel, MemoryLogger } from './logger.ts';
export { injectTraceContext, extractTraceContext } from './propagation.ts';
export { recordFailedCall, startSpan, withSpan } from './spans.ts';
export type { SpanOptions } from './spans.ts';
export { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
export type { Context, Link, Span, SpanContext, Tracer } from '@opentelemetry/api';
export {
  DEFAULT_EXPORT_INTERVAL_MS,
  PROMETHEUS_CONTENT_TYPE,
  SERVICE_ATTRIBUTE,
  initMetrics,
  metricsText,
} from './metrics.ts';
export type { Metrics, MetricsOptions } from './metrics.ts';
export {
  FAST_SECONDS_BUCKETS,
  KeyedSeries,
  MAX_SERIES_PER_FAMILY,
  SECONDS_BUCKETS,
  TOKEN_BUCKETS,
  counterFamily,
  histogramFamily,
} from './instruments.ts';
export type {
  BoundCounter,
  BoundHistogram,
  CounterFamily,
  HistogramFamily,
  HistogramOptions,
  InstrumentOptions,
} from './instruments.ts';
export type { Attributes, ObservableResult } from '@opentelemetry/api';
export { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
export type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-node';
