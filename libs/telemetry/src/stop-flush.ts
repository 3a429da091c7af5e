import { diag } from '@opentelemetry/api';

/**
 * How long a stopping process waits for its last OTLP export. A collector
 * that answers does so in milliseconds; one that is down would otherwise
 * hold the stop for the exporters' own timeouts and retries (12.6 s for
 * `ars up` to stop with nothing listening on the endpoint), and Ctrl-C or a
 * Kubernetes termination would wait on telemetry.
 */
export const STOP_FLUSH_TIMEOUT_MS = 3_000;

/**
 * Waits for `flush` at most `timeoutMs`. Past it, the stop goes on and what
 * the flush held is dropped, said once through `diag` (the service's log).
 * A failed flush is not the stop's failure: the exporter has reported it.
 */
export async function flushBeforeStop(
  what: string,
  flush: Promise<unknown>,
  timeoutMs: number = STOP_FLUSH_TIMEOUT_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), timeoutMs).unref();
  });
  const outcome = await Promise.race([
    flush.then(
      () => 'flushed' as const,
      () => 'failed' as const,
    ),
    expired,
  ]);
  clearTimeout(timer);
  if (outcome === 'expired') {
    diag.warn(`${what}: the collector did not take the last export within ${timeoutMs} ms of the stop; it is dropped`);
  }
}
