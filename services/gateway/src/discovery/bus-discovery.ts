import { isConnectionUp, pingServices } from '@ars/bus';
import type { Bus, RpcClient } from '@ars/bus';
import { ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { BusState, Discovery, InstanceStats, ServiceHealthReport } from '../ports.ts';

/** The internal health endpoint every service registers (service-kit's `HEALTH_METHOD`). */
export const HEALTH_METHOD = '_health';

/** The identity the gateway's own probes travel under; it carries no scope. */
const PROBE_IDENTITY: VerifiedIdentity = Object.freeze({
  tenant: '_system',
  user: 'gateway',
  session: '_probe',
  scopes: Object.freeze([]),
});

const decoder = new TextDecoder();

function isInstanceStats(value: unknown): value is InstanceStats {
  if (typeof value !== 'object' || value === null) return false;
  const row = value as Partial<Record<keyof InstanceStats, unknown>>;
  return typeof row.name === 'string' && typeof row.id === 'string' && Array.isArray(row.endpoints);
}

/** `$SRV.STATS` fan-in: every replica's endpoint counters (an empty list when nothing answers). */
async function statsServices(bus: Bus, timeoutMs: number): Promise<InstanceStats[]> {
  const found: InstanceStats[] = [];
  try {
    const replies = await bus.nc.requestMany('$SRV.STATS', undefined, { strategy: 'stall', maxWait: timeoutMs });
    for await (const msg of replies) {
      if (msg.data.length === 0) continue;
      try {
        const row: unknown = JSON.parse(decoder.decode(msg.data));
        if (isInstanceStats(row)) found.push(row);
      } catch {
        // Another program's malformed answer: not ours to report.
      }
    }
  } catch (error) {
    if (!(error instanceof Error && /no responders/i.test(error.message))) throw error;
  }
  return found;
}

/** The services API over the bus: `$SRV.INFO`, `$SRV.STATS` and each service's `_health`. */
export function createBusDiscovery(bus: Bus, rpc: RpcClient, options: { timeoutMs: number }): Discovery {
  return {
    info: () => pingServices(bus, { timeoutMs: options.timeoutMs }),
    stats: () => statsServices(bus, options.timeoutMs),
    async health(service) {
      const report = await rpc.call(
        service,
        HEALTH_METHOD,
        PROBE_IDENTITY,
        {},
        { timeoutMs: Math.max(options.timeoutMs, 2000) },
      );
      return report as ServiceHealthReport;
    },
  };
}

/** Whether the bus connection is up (see `isConnectionUp`). */
export function trackBusState(bus: Bus): BusState {
  return { isConnected: () => isConnectionUp(bus.nc) };
}

/**
 * The gateway's RPC client, failing at once while the bus connection is
 * down: the call is refused `unavailable` (503) and nothing is sent. A
 * request published then would wait in the connection's reconnect buffer
 * for the whole timeout and answer 504 with its outcome unknown, and the
 * buffer is still sent once the connection is back: a `start` its caller
 * retried after that 504 ran twice. Refused at once, the caller knows the
 * method did not run and may retry it.
 */
export function connectedOnly(rpc: RpcClient, state: BusState): RpcClient {
  return {
    call(service, method, identity, body, options) {
      if (state.isConnected()) return rpc.call(service, method, identity, body, options);
      return Promise.reject(
        new ServiceError('unavailable', `the gateway has no bus connection; ${method} was not sent: retry it`, {
          retryable: true,
        }),
      );
    },
  };
}
