import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectBus,
  createEventPublisher,
  createRpcClient,
  ensureInfrastructure,
  serveService,
  startNatsServer,
} from '@ars/bus';
import type { Bus, NatsServerHandle, ServedService } from '@ars/bus';
import { storedEvents } from '@ars/service-kit/testing';
import { createLogger } from '@ars/telemetry';
import { createBusDiscovery } from '../../src/discovery/bus-discovery.ts';
import { startTopologyWatch, TOPOLOGY_IDENTITY } from '../../src/discovery/topology-watch.ts';
import type { TopologyWatch } from '../../src/discovery/topology-watch.ts';

/**
 * Two gateways' topology watches on one real nats-server: an instance
 * joining and one leaving are each stored once as `topology.changed`,
 * however many gateways saw them.
 */

const logger = createLogger({ name: 'topology-test', level: 'silent' });

interface Projection {
  services: { service: string; instances: { instance_id: string }[] }[];
}

describe('topology.changed', () => {
  let dir: string;
  let nats: NatsServerHandle;
  let bus: Bus;
  let watches: TopologyWatch[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-topology-'));
    nats = await startNatsServer({ storeDir: join(dir, 'nats') });
    bus = await connectBus({ servers: nats.url, name: 'topology-test' });
    await ensureInfrastructure(bus, { logger });
    const discovery = createBusDiscovery(bus, createRpcClient(bus, { timeoutMs: 2_000 }), { timeoutMs: 200 });
    watches = ['gateway-a', 'gateway-b'].map((source) =>
      startTopologyWatch({
        discovery,
        publisher: createEventPublisher(bus, { source, logger }),
        intervalMs: 0,
        clock: () => new Date(),
        logger,
      }),
    );
  });

  afterAll(async () => {
    for (const watch of watches ?? []) watch.stop();
    await bus?.close();
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** Two polls of every watch: enough to confirm a change. */
  const pollTwice = async () => {
    for (let i = 0; i < 2; i++) await Promise.all(watches.map((w) => w.poll()));
  };
  const serve = (service: string, instanceId: string): Promise<ServedService> =>
    serveService(bus, { service, version: '1.0.0', instanceId, handlers: {}, logger });
  const changes = async () =>
    (await storedEvents(bus, { ...TOPOLOGY_IDENTITY, type: 'topology.changed' })).map(
      (frame) => frame.payload.Projection as Projection,
    );
  const instancesOf = (projection: Projection | undefined, service: string) =>
    projection?.services.find((s) => s.service === service)?.instances.map((i) => i.instance_id) ?? [];

  it('publishes a join and a leave once each, whichever gateways saw them', async () => {
    await pollTwice();
    expect(await changes()).toEqual([]);

    const joined = await serve('worker', 'w-1');
    await pollTwice();
    const afterJoin = await changes();
    expect(afterJoin).toHaveLength(1);
    expect(instancesOf(afterJoin[0], 'worker')).toHaveLength(1);

    await joined.stop();
    await pollTwice();
    const afterLeave = await changes();
    expect(afterLeave).toHaveLength(2);
    expect(instancesOf(afterLeave[1], 'worker')).toEqual([]);
  });

  it('does not publish a change that a single poll saw', async () => {
    const before = (await changes()).length;
    const flicker = await serve('flicker', 'f-1');
    await Promise.all(watches.map((w) => w.poll()));
    await flicker.stop();
    await pollTwice();
    expect(await changes()).toHaveLength(before);
  });
});
