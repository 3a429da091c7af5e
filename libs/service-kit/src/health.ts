import { isConnectionUp } from '@ars/bus';
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
  /** How long each check may take before it counts as failed, in milliseconds; @default 2000 */
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

/** How long each dependency check may take before it counts as failed, in milliseconds. */
export const DEFAULT_CHECK_TIMEOUT_MS = 2000;

/** The outcome of each dependency check. */
export interface DependencyChecks {
  readonly nats: CheckStatus;
  readonly store: CheckStatus;
}

/**
 * Checks the service's dependencies, each bounded by `timeoutMs`: NATS is
 * `ok` when the connection is up (not closed, not between reconnects) and a
 * round trip (flush) completes; the store when a read answers.
 */
export async function checkDependencies(
  bus: Bus,
  store: Store,
  timeoutMs: number = DEFAULT_CHECK_TIMEOUT_MS,
): Promise<DependencyChecks> {
  // A flush while the connection is down would only wait out the timeout.
  const nats: Promise<CheckStatus> = isConnectionUp(bus.nc)
    ? check(() => bus.nc.flush(), timeoutMs)
    : Promise.resolve('failed');
  const [natsStatus, storeStatus] = await Promise.all([
    nats,
    check(() => store.collection(HEALTH_METHOD).findOne({}), timeoutMs),
  ]);
  return { nats: natsStatus, store: storeStatus };
}

/**
 * The `_health` handler: a NATS round trip (flush) and a store read, each
 * bounded by a timeout, so a wedged dependency reports `degraded` instead of
 * hanging the probe.
 */
export function createHealthHandler(options: HealthOptions): RpcHandler {
  const timeoutMs = options.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  return async () => {
    const { nats, store } = await checkDependencies(options.bus, options.store, timeoutMs);
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
