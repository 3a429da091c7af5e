import { KeyedSeries, SECONDS_BUCKETS, SERVICE_ATTRIBUTE, counterFamily, histogramFamily } from '@ars/telemetry';
import type { Attributes, BoundCounter, BoundHistogram } from '@ars/telemetry';

/**
 * The gateway's own series: every method call at the HTTP edge, and the
 * event stream's subscriptions. Series are bound once per method (and per
 * status and error code on its first occurrence), so that recording a
 * response is one Map lookup and a few additions.
 */

const GATEWAY: Attributes = { [SERVICE_ATTRIBUTE]: 'gateway' };

/** `http.server.request.duration` (OTel HTTP semantic conventions), with the registry method as `ars.method`. */
export const HTTP_SERVER_DURATION = histogramFamily('http.server.request.duration', {
  description:
    'Duration of the HTTP requests of registry methods at the gateway, by method, status and error code (error.type)',
  unit: 's',
  boundaries: SECONDS_BUCKETS,
});

/** Closed event-stream subscriptions, by reason; `dropped` is the slow-consumer policy's. */
export const SSE_CLOSED = counterFamily('ars.gateway.sse.subscriptions.closed', {
  description:
    'Event-stream (SSE) subscriptions ended, by reason: dropped (slow consumer), client, idle, shutdown, failed, unauthorized',
  unit: '{subscription}',
});

/** The HTTP verbs kept as they are; any other is `_OTHER` (as the semantic conventions ask). */
const KNOWN_VERBS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);

/** What one finished request tells. */
export interface RequestOutcome {
  /** The registry method; undefined when no route matched. */
  readonly method: { readonly name: string } | undefined;
  readonly httpMethod: string;
  readonly status: number;
  /** The error envelope's code, when one was sent. */
  readonly code: string | undefined;
  readonly seconds: number;
}

/** Records method calls into {@link HTTP_SERVER_DURATION}. */
export class MethodMetrics {
  readonly #byMethod = new Map<string, KeyedSeries<BoundHistogram>>();

  record(outcome: RequestOutcome): void {
    const name = outcome.method?.name ?? '_unknown';
    let series = this.#byMethod.get(name);
    if (series === undefined) {
      const base: Attributes = { ...GATEWAY, 'ars.method': name };
      series = new KeyedSeries((key) => HTTP_SERVER_DURATION.bind({ ...base, ...attributesOfKey(key) }), 200);
      this.#byMethod.set(name, series);
    }
    const verb = KNOWN_VERBS.has(outcome.httpMethod) ? outcome.httpMethod : '_OTHER';
    const error = outcome.status >= 400 ? (outcome.code ?? String(outcome.status)) : '';
    series.get(`${verb} ${outcome.status} ${error}`).record(outcome.seconds);
  }
}

/** The attributes of a `verb status error` key of {@link MethodMetrics}. */
function attributesOfKey(key: string): Attributes {
  const [verb = '_OTHER', status = '0', error = ''] = key.split(' ');
  return {
    'http.request.method': verb,
    'http.response.status_code': Number(status),
    ...(error === '' ? {} : { 'error.type': error }),
  };
}

/** The closed-subscription counters of each reason, bound once. */
export function sseClosedCounters(): (reason: string) => BoundCounter {
  const series = new KeyedSeries((reason) => SSE_CLOSED.bind({ ...GATEWAY, reason }), 20);
  return (reason) => series.get(reason);
}
