/**
 * @ars/telemetry: tracing (OpenTelemetry, W3C trace context) and structured
 * logs (pino) with trace ids on every line. Configuration is passed in; this
 * package never reads the environment.
 */
export { initTelemetry, tracingActive } from './setup.ts';
export type { Telemetry, TelemetryOptions } from './setup.ts';
export { createLogger, createMemoryLogger } from './logger.ts';
export type { Logger, LoggerOptions, LogLevel, MemoryLogger } from './logger.ts';
export { injectTraceContext, extractTraceContext } from './propagation.ts';
export { startSpan, withSpan } from './spans.ts';
export type { SpanOptions } from './spans.ts';
export { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
export type { Context, Span, Tracer } from '@opentelemetry/api';
export { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
export type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-node';
