import { headerOf } from '@ars/bus';
import type { JsMsg } from '@ars/bus';
import type { EventFrame } from '@ars/contracts';
import { SpanKind, extractTraceContext, tracingActive, withSpan } from '@ars/telemetry';

/**
 * Handles one consumed event inside a CONSUMER span whose parent is the
 * trace context its publisher put in the message's headers (`traceparent`),
 * so that the session's work joins the trace of the run or request that
 * published the event. While nothing traces, the handler runs as it is.
 */
export function withConsumerSpan<T>(msg: JsMsg, frame: EventFrame, consumer: string, fn: () => Promise<T>): Promise<T> {
  if (!tracingActive()) return fn();
  const parent = extractTraceContext((key) => headerOf(msg, key) || undefined);
  return withSpan(
    `process ${frame.type}`,
    {
      service: 'session',
      kind: SpanKind.CONSUMER,
      parent,
      attributes: {
        'messaging.system': 'nats',
        'messaging.operation.type': 'process',
        'messaging.consumer.group.name': consumer,
        'messaging.message.id': String(msg.seq),
        'ars.event_type': frame.type,
      },
    },
    fn,
  );
}
