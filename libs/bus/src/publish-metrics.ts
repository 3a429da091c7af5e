import { FAST_SECONDS_BUCKETS, SERVICE_ATTRIBUTE, histogramFamily } from '@ars/telemetry';
import type { BoundHistogram } from '@ars/telemetry';

/**
 * Event publish latency: from the publish to JetStream's acknowledgement,
 * in seconds (`messaging.client.operation.duration` of the OTel messaging
 * semantic conventions), per publishing service.
 */
export const PUBLISH_DURATION = histogramFamily('messaging.client.operation.duration', {
  description: 'Duration of an event publish to the EVENTS stream, until JetStream acknowledged it (or failed)',
  unit: 's',
  boundaries: FAST_SECONDS_BUCKETS,
});

/** The bound series of one publishing service: acknowledged, and failed. */
export interface PublishTimer {
  readonly ok: BoundHistogram;
  readonly failed: BoundHistogram;
}

/** Binds the publish-latency series of `source` (once per publisher, not per publish). */
export function publishTimer(source: string): PublishTimer {
  const attributes = {
    [SERVICE_ATTRIBUTE]: source,
    'messaging.system': 'nats',
    'messaging.operation.name': 'publish',
    'messaging.destination.name': 'EVENTS',
  };
  return {
    ok: PUBLISH_DURATION.bind(attributes),
    failed: PUBLISH_DURATION.bind({ ...attributes, 'error.type': 'publish_failed' }),
  };
}
