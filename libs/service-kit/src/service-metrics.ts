import { isServiceError } from '@ars/contracts';
import { isConnectionUp } from '@ars/bus';
import type { Bus, RpcHandler } from '@ars/bus';
import { observeTransactions } from '@ars/store';
import { FAST_SECONDS_BUCKETS, KeyedSeries, histogramFamily } from '@ars/telemetry';
import type { Attributes, BoundHistogram, Metrics } from '@ars/telemetry';

/**
 * The metrics every service has, recorded by the kit: each served method's
 * calls (`rpc.server.call.duration`, by method and error code), the NATS
 * connection's state, and the store's transactions.
 */

/** Duration of a served RPC, in seconds (OTel RPC semantic conventions). */
export const RPC_SERVER_DURATION = histogramFamily('rpc.server.call.duration', {
  description: 'Duration of the RPCs a service answers over NATS, by method; error.type is the error code',
  unit: 's',
  boundaries: FAST_SECONDS_BUCKETS,
});

/** Duration of a store transaction, in seconds (OTel database semantic conventions). */
export const STORE_TRANSACTION_DURATION = histogramFamily('db.client.operation.duration', {
  description:
    'Duration of the embedded store transactions: a read, or the write transaction one event-loop turn of writes shares',
  unit: 's',
  boundaries: FAST_SECONDS_BUCKETS,
});

/** The attributes of one method of `service` (rpc.system `nats`). */
function methodAttributes(metrics: Pick<Metrics, 'service'>, service: string, method: string): Attributes {
  return { ...metrics.service, 'rpc.system': 'nats', 'rpc.service': service, 'rpc.method': method };
}

/** A normalised code for `error`: its ServiceError code, `internal` for anything else. */
function codeOf(error: unknown): string {
  return isServiceError(error) ? error.code : 'internal';
}

/**
 * Wraps each handler so that every call is timed into
 * `rpc.server.call.duration`, its series bound once per method (and per
 * error code, on the first error of that code).
 */
export function instrumentHandlers(
  service: string,
  handlers: Readonly<Record<string, RpcHandler>>,
  metrics: Pick<Metrics, 'service'>,
): Record<string, RpcHandler> {
  const out: Record<string, RpcHandler> = {};
  for (const [method, handler] of Object.entries(handlers)) {
    const attributes = methodAttributes(metrics, service, method);
    const ok = RPC_SERVER_DURATION.bind(attributes);
    const failed = new KeyedSeries<BoundHistogram>(
      (code) => RPC_SERVER_DURATION.bind({ ...attributes, 'error.type': code }),
      100,
    );
    out[method] = async (request) => {
      const started = performance.now();
      try {
        const result = await handler(request);
        ok.record((performance.now() - started) / 1000);
        return result;
      } catch (error) {
        failed.get(codeOf(error)).record((performance.now() - started) / 1000);
        throw error;
      }
    };
  }
  return out;
}

/** Observes `ars.nats.connected`: 1 while `bus`'s connection is up, else 0. */
export function observeConnection(metrics: Metrics, bus: Bus): void {
  metrics.gauge(
    'ars.nats.connected',
    { description: 'Whether the service is connected to NATS: 1 connected, 0 not (reconnecting or closed)', unit: '1' },
    (result) => result.observe(isConnectionUp(bus.nc) ? 1 : 0, metrics.service),
  );
}

let storeObserved = false;

/**
 * Times the embedded store's transactions into `db.client.operation.duration`
 * (once per process: the hook is the store module's). In one process that
 * hosts several services the series are the process's, without
 * `ars.service`.
 */
export function observeStoreTransactions(): void {
  if (storeObserved) return;
  storeObserved = true;
  const series = {
    read: STORE_TRANSACTION_DURATION.bind({ 'db.system.name': 'sqlite', 'db.operation.name': 'read_transaction' }),
    write: STORE_TRANSACTION_DURATION.bind({ 'db.system.name': 'sqlite', 'db.operation.name': 'write_transaction' }),
    readFailed: STORE_TRANSACTION_DURATION.bind({
      'db.system.name': 'sqlite',
      'db.operation.name': 'read_transaction',
      'error.type': 'failed',
    }),
    writeFailed: STORE_TRANSACTION_DURATION.bind({
      'db.system.name': 'sqlite',
      'db.operation.name': 'write_transaction',
      'error.type': 'failed',
    }),
  };
  observeTransactions((kind, seconds, ok) => {
    if (kind === 'read') (ok ? series.read : series.readFailed).record(seconds);
    else (ok ? series.write : series.writeFailed).record(seconds);
  });
}
