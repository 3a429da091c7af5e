import type { Bus, RpcHandler } from '@ars/bus';
import type { Store } from '@ars/store';

/**
 * The internal endpoint every kit-booted service registers next to its
 * registry methods (subject `ars.rpc.<service>._health`). Not a registry
 * method: the gateway never routes to it.
 */
export const HEALTH_METHOD = '_health';

/** The result of one dependency check. */
export type CheckStatus = 'ok' | 'failed';

/** What `_health` answers. */
export interface HealthReport {
  readonly service: string;
  readonly instance_id: string;
  readonly version: string;
  /** `degraded` when any check failed. */
  readonly status: 'ok' | 'degraded';
  readonly checks: { readonly nats: CheckStatus; readonly store: CheckStatus };
  /** Whole seconds since the service started. */
  readonly uptime_seconds: number;
  readonly store_kind: Store['kind'];
}

/** Inputs of {@link createHealthHandler}. */
export interface HealthOptions {
  readonly service: string;
  readonly instanceId: string;
  readonly version: string;
  readonly bus: Bus;
  readonly store: Store;
  /** `performance.now()`-style start time in milliseconds. */
  readonly startedAt: number;
  /** How long each check may take before it counts as failed; @default 2000 */
  readonly checkTimeoutMs?: number;
}

async function check(probe: () => Promise<unknown>, timeoutMs: number): Promise<CheckStatus> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<CheckStatus>((resolve) => {
    timer = setTimeout(() => resolve('failed'), timeoutMs);
  });
  try {
    return await Promise.race([
      probe().then(
        (): CheckStatus => 'ok',
        (): CheckStatus => 'failed',
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The `_health` handler: a NATS round trip (flush) and a store read, each
 * bounded by a timeout, so a wedged dependency reports `degraded` instead of
 * hanging the probe.
 */
export function createHealthHandler(options: HealthOptions): RpcHandler {
  const timeoutMs = options.checkTimeoutMs ?? 2000;
  return async () => {
    const [nats, store] = await Promise.all([
      check(() => options.bus.nc.flush(), timeoutMs),
      check(() => options.store.collection(HEALTH_METHOD).findOne({}), timeoutMs),
    ]);
    const report: HealthReport = {
      service: options.service,
      instance_id: options.instanceId,
      version: options.version,
      status: nats === 'ok' && store === 'ok' ? 'ok' : 'degraded',
      checks: { nats, store },
      uptime_seconds: Math.floor((performance.now() - options.startedAt) / 1000),
      store_kind: options.store.kind,
    };
    return report;
  };
}
