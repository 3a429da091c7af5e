import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageType } from '@nats-io/jetstream';
import { connectBus, startNatsCluster } from '../src/index.ts';
import type { Bus, NatsClusterHandle } from '../src/index.ts';
import { tempDir } from './helpers.ts';

describe('a local 3-node cluster', () => {
  let cluster: NatsClusterHandle;
  let bus: Bus;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    dir = await tempDir('cluster');
    cluster = await startNatsCluster({ size: 3, storeDir: dir.path });
    // A comma-joined list, as NATS_URL carries it.
    bus = await connectBus({ servers: cluster.urls.join(','), name: 'cluster-test' });
  });

  afterAll(async () => {
    await bus?.close();
    await cluster?.stop();
    await dir?.remove();
  });

  it('starts three distinct servers', () => {
    expect(new Set(cluster.servers.map((s) => s.port)).size).toBe(3);
    expect(new Set(cluster.servers.map((s) => s.pid)).size).toBe(3);
  });

  it('accepts a publish on a stream with three replicas', async () => {
    const info = await bus.jsm.streams.add({
      name: 'R3',
      subjects: ['r3.>'],
      num_replicas: 3,
      storage: StorageType.File,
    });
    expect(info.config.num_replicas).toBe(3);
    const ack = await bus.js.publish('r3.x', 'hello', { msgID: 'm-1' });
    expect(ack).toMatchObject({ stream: 'R3', seq: 1, duplicate: false });
    const state = await bus.jsm.streams.info('R3');
    expect(state.cluster?.replicas).toHaveLength(2);
  });
});
