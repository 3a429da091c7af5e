import { context, isSpanContextValid, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import type { Attributes, Context, Link, Span, SpanKind, Tracer } from '@opentelemetry/api';
import { randomHex } from './random-hex.ts';
import { carrierSampled, SERVICE_SPAN_ATTRIBUTE, tracingActive } from './setup.ts';

/** Options of {@link withSpan}. */
export interface SpanOptions {
  /** @default SpanKind.INTERNAL */
  readonly kind?: SpanKind;
  readonly attributes?: Attributes;
  /** The parent; @default the active context. */
  readonly parent?: Context;
  /**
   * The service the span works for: the name of its tracer and its
   * `ars.service` attribute. @default the local parent's `ars.service`
   * (a span of a library inherits it), tracer `@ars/telemetry`
   */
  readonly service?: string;
  /** Links to other spans (a redelivered run's previous attempt). */
  readonly links?: Link[];
  /**
   * False: no span is recorded, as while tracing is off (the context still
   * travels). For periodic probes, whose root trace every few seconds is
   * noise to an operator. @default true
   */
  readonly record?: boolean;
}

const TRACER_NAME = '@ars/telemetry';

/**
 * Tracers by name. The process has one global provider ({@link tracingActive}
 * is false until it is registered), so a tracer stays valid; asking the API
 * for it on every span cost about a percent of a service's CPU under load.
 */
const tracers = new Map<string, Tracer>();

function tracerNamed(name: string): Tracer {
  let tracer = tracers.get(name);
  if (tracer === undefined) {
    tracer = trace.getTracer(name);
    tracers.set(name, tracer);
  }
  return tracer;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs `fn` inside a new active span and ends it when `fn` settles. A throw is
 * recorded on the span (exception event, status ERROR) and rethrown unchanged.
 *
 * While no exporter is configured ({@link tracingActive} false) no span is
 * made: `fn` runs in the parent's trace (a remote caller's trace id still
 * reaches the logs and the next hop's `traceparent`), or, at a root, in a
 * fresh trace of a non-recording span.
 */
export async function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  if (options.record === false || !tracingActive()) return withoutSpan(options.parent, fn);
  const tracer = tracerNamed(options.service ?? TRACER_NAME);
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(name, sdkOptions(options), parent, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : errorMessage(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Starts a span that the caller ends itself (a server request whose start
 * and end are in different hooks). While no exporter is configured
 * ({@link tracingActive} false) no span is made, as in {@link withSpan}:
 * the parent's span is returned (a remote caller's trace), or at a root a
 * fresh non-recording one; setting attributes on it and ending it do
 * nothing, and the trace id still reaches the logs and the next hop.
 */
export function startSpan(name: string, options: SpanOptions = {}, tracerName: string = TRACER_NAME): Span {
  const parent = options.parent ?? context.active();
  if (!tracingActive()) return spanToCarry(parent);
  return tracerNamed(options.service ?? tracerName).startSpan(name, sdkOptions(options), parent);
}

/** The API's span options of ours (`service` becomes the `ars.service` attribute). */
function sdkOptions(options: SpanOptions): { kind?: SpanKind; attributes?: Attributes; links?: Link[] } {
  const attributes =
    options.service === undefined
      ? options.attributes
      : { ...options.attributes, [SERVICE_SPAN_ATTRIBUTE]: options.service };
  return {
    ...(options.kind === undefined ? {} : { kind: options.kind }),
    ...(attributes === undefined ? {} : { attributes }),
    ...(options.links === undefined ? {} : { links: options.links }),
  };
}

/** The span whose context travels while nothing is recorded: the parent's when valid, else a fresh root's. */
function spanToCarry(base: Context): Span {
  const existing = trace.getSpan(base);
  if (existing !== undefined && isSpanContextValid(existing.spanContext())) return existing;
  const ids = randomHex(24);
  return trace.wrapSpanContext({
    traceId: ids.slice(0, 32),
    spanId: ids.slice(32),
    traceFlags: carrierSampled() ? TraceFlags.SAMPLED : TraceFlags.NONE,
  });
}

/**
 * {@link withSpan} while nothing exports spans: the trace context travels,
 * nothing is recorded. Inside a trace `fn` runs in it (the given parent made
 * active); a root gets fresh ids in a non-recording span, so that its logs
 * and the calls it makes still share one trace id.
 */
function withoutSpan<T>(parent: Context | undefined, fn: (span: Span) => Promise<T>): Promise<T> {
  const base = parent ?? context.active();
  const span = spanToCarry(base);
  if (trace.getSpan(base) === span) return parent === undefined ? fn(span) : context.with(parent, () => fn(span));
  return context.with(trace.setSpan(base, span), () => fn(span));
}

/**
 * Records, after the fact, the span of a call that failed: from `startedAt`
 * (a `performance.now()` reading taken when the call began) to now, under
 * the active span, with the error and status ERROR. For calls that make no
 * span of their own while they succeed (RPC clients under
 * `rpcClientSpans: 'errors'`): a failure still shows in the trace.
 */
export function recordFailedCall(name: string, options: SpanOptions, startedAt: number, error: unknown): void {
  if (options.record === false || !tracingActive()) return;
  const parent = options.parent ?? context.active();
  const span = tracerNamed(options.service ?? TRACER_NAME).startSpan(
    name,
    { ...sdkOptions(options), startTime: startedAt },
    parent,
  );
  span.recordException(error instanceof Error ? error : errorMessage(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
  span.end();
}
