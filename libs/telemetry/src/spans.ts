import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Context, Span, SpanKind } from '@opentelemetry/api';

/** Options of {@link withSpan}. */
export interface SpanOptions {
  /** @default SpanKind.INTERNAL */
  readonly kind?: SpanKind;
  readonly attributes?: Attributes;
  /** The parent; @default the active context. */
  readonly parent?: Context;
}

const TRACER_NAME = '@ars/telemetry';

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs `fn` inside a new active span and ends it when `fn` settles. A throw is
 * recorded on the span (exception event, status ERROR) and rethrown unchanged.
 */
export async function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const tracer = trace.getTracer(TRACER_NAME);
  const parent = options.parent ?? context.active();
  const spanOptions = {
    ...(options.kind === undefined ? {} : { kind: options.kind }),
    ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
  };
  return tracer.startActiveSpan(name, spanOptions, parent, async (span) => {
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
