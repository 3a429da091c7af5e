import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';

/** The carrier keys of the W3C trace-context propagator. */
const TRACE_KEYS = ['traceparent', 'tracestate'] as const;

/**
 * Writes `traceparent` (and `tracestate` when present) of the active context
 * through `set`, for example into NATS headers. Writes nothing outside a span.
 */
export function injectTraceContext(set: (key: string, value: string) => void): void {
  propagation.inject(context.active(), undefined, {
    set: (_carrier, key, value) => set(key, value),
  });
}

/**
 * Reads a remote parent through `get` and returns a context holding it, based
 * on the root context so that nothing of the receiver's current context leaks
 * in. Without a valid `traceparent` the result has no span (a new trace starts).
 */
export function extractTraceContext(get: (key: string) => string | undefined): Context {
  return propagation.extract(ROOT_CONTEXT, undefined, {
    get: (_carrier, key) => get(key),
    keys: () => [...TRACE_KEYS],
  });
}
