import { createHash } from 'node:crypto';
import type { EventPublisher } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import { topologyProjection } from '../local/fleet.handlers.ts';
import type { DiscoveredInstance, Discovery } from '../ports.ts';

/**
 * `topology.changed`: every gateway polls `$SRV.INFO` and publishes the
 * projection when the set of instances (service, instance id, version)
 * changed. A change counts once two polls in a row agree on it, so that a
 * replica slow to answer one fan-in is not reported leaving and joining.
 * Every gateway sees the same change: the event id is derived from the
 * transition (the previous and the new membership), so the stream's
 * duplicate window keeps one copy however many gateways publish it. The
 * first poll of a gateway only learns the membership (a gateway's own start
 * is reported by the others).
 */

/** The identity of topology events: no tenant's own (admin cross-tenant subscribers see them). */
export const TOPOLOGY_IDENTITY = Object.freeze({ tenant: '_system', user: 'gateway', session: '_topology' });

/** A membership key: the sorted `service/instance@version` rows, hashed. */
export function membershipKey(instances: readonly DiscoveredInstance[]): string {
  const rows = instances.map((i) => `${i.name}/${i.id}@${i.version}`).sort();
  return createHash('sha256').update(rows.join('\n')).digest('hex').slice(0, 32);
}

export interface TopologyWatchOptions {
  readonly discovery: Pick<Discovery, 'info'>;
  readonly publisher: Pick<EventPublisher, 'publish'>;
  /** Between polls, in ms. */
  readonly intervalMs: number;
  readonly clock: () => Date;
  readonly logger: Logger;
}

export interface TopologyWatch {
  /** One poll: publishes `topology.changed` when a change is confirmed. Never throws; does nothing once stopped. */
  poll(): Promise<void>;
  /** Stops polling; a poll in flight may still end, and its failure is not logged. */
  stop(): void;
}

/** Starts polling (unless `intervalMs` is 0: then only {@link TopologyWatch.poll} polls). */
export function startTopologyWatch(options: TopologyWatchOptions): TopologyWatch {
  let known: string | undefined;
  let candidate: string | undefined;
  let running: Promise<void> | undefined;

  async function check(): Promise<void> {
    const instances = await options.discovery.info();
    const key = membershipKey(instances);
    if (known === undefined || key === known) {
      known ??= key;
      candidate = undefined;
      return;
    }
    if (candidate !== key) {
      candidate = key;
      return;
    }
    await options.publisher.publish({
      type: 'topology.changed',
      identity: TOPOLOGY_IDENTITY,
      payload: { Projection: topologyProjection(instances, options.clock()) },
      eventId: `topology.changed:${known}:${key}`,
    });
    known = key;
    candidate = undefined;
  }

  let stopped = false;
  const poll = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    running ??= check()
      // A poll still waiting when the gateway stops fails with its closing connection: that is no problem to report.
      .catch((error: unknown) => {
        if (!stopped) options.logger.warn({ err: error }, 'topology poll failed');
      })
      .finally(() => (running = undefined));
    return running;
  };
  const timer = options.intervalMs > 0 ? setInterval(() => void poll(), options.intervalMs) : undefined;
  timer?.unref();
  const stop = (): void => {
    stopped = true;
    clearInterval(timer);
  };
  return { poll, stop };
}
