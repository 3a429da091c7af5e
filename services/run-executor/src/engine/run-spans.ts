import {
  SpanKind,
  context,
  extractTraceContext,
  injectTraceContext,
  trace,
  tracingActive,
  withSpan,
} from '@ars/telemetry';
import type { Context, Link } from '@ars/telemetry';

/**
 * The spans of a run, kept out of the engine's logic: the `run` span (child
 * of the start request's trace, carried by the RUNS message), one span per
 * planner step and one per control applied. All of them are made only
 * while tracing is active (`withSpan`); otherwise the run keeps the start's
 * trace context and nothing is recorded.
 */

/** The service every span here belongs to (`ars.service`, and its tracer's name). */
export const RUN_EXECUTOR = 'run-executor';

/** The contexts of the runs in flight here, by task id: where a control's span hangs. */
const runContexts = new Map<string, Context>();

/**
 * Runs `fn` (a claimed run's execution) inside its `run` span. The span
 * carries the task id and delivery count now; {@link annotateRun} adds the
 * agent and tenant once the task is loaded. Never any user content.
 */
export function withRunSpan<T>(taskId: string, deliveryCount: number, fn: () => Promise<T>): Promise<T> {
  return withSpan(
    'run',
    { service: RUN_EXECUTOR, attributes: { 'ars.task.id': taskId, 'ars.run.delivery': deliveryCount } },
    async () => {
      runContexts.set(taskId, context.active());
      try {
        return await fn();
      } finally {
        runContexts.delete(taskId);
      }
    },
  );
}

/** Adds the task's agent and tenant to the active `run` span (no-op when nothing records). */
export function annotateRun(
  task: { readonly agent_id?: string | undefined; readonly tenant: string },
  defaultAgentId: string,
): void {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return;
  span.setAttributes({ 'ars.agent.id': task.agent_id ?? defaultAgentId, 'ars.tenant': task.tenant });
}

/**
 * A redelivered run's link to its previous attempt: links the active `run`
 * span to the attempt whose `traceparent` the checkpoint kept, and returns
 * this attempt's one for the checkpoint to keep (the previous one when this
 * attempt records nothing, so a link survives an unsampled attempt).
 */
export function linkAttempts(previous: string | undefined): string | undefined {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return previous;
  if (previous !== undefined) {
    const linked = trace.getSpanContext(extractTraceContext((key) => (key === 'traceparent' ? previous : undefined)));
    if (linked !== undefined) span.addLink({ context: linked, attributes: { 'ars.link': 'previous_attempt' } });
  }
  let current: string | undefined;
  injectTraceContext((key, value) => {
    if (key === 'traceparent') current = value;
  });
  return current;
}

/** Runs planner step `stepNo` (1-based) inside its span. */
export function withStepSpan<T>(stepNo: number, fn: () => Promise<T>): Promise<T> {
  return withSpan('step', { service: RUN_EXECUTOR, attributes: { 'ars.step': stepNo } }, fn);
}

/**
 * Applies a control inside its span: a child of the run's span (so that it
 * sits in the run's trace), linked to the request that sent it (the active
 * context, from the control message's headers).
 */
export function withControlSpan<T>(taskId: string, method: string, fn: () => Promise<T>): Promise<T> {
  if (!tracingActive()) return fn();
  const sender = trace.getSpanContext(context.active());
  const links: Link[] =
    sender === undefined ? [] : [{ context: sender, attributes: { 'ars.link': 'control_request' } }];
  const parent = runContexts.get(taskId) ?? context.active();
  return withSpan(
    `control ${method}`,
    {
      service: RUN_EXECUTOR,
      kind: SpanKind.INTERNAL,
      parent,
      links,
      attributes: { 'ars.control': method, 'ars.task.id': taskId },
    },
    fn,
  );
}
