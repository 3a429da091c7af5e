import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AckPolicy } from '@nats-io/jetstream';
import type { ConsumerInfo, StreamInfo } from '@nats-io/jetstream';
import { createMemoryLogger } from '@ars/telemetry';
import {
  ARTIFACTS_OBJECT_STORE,
  EVENTS_STREAM,
  FLEET_BUCKET,
  REVOCATIONS_BUCKET,
  RUNS_STREAM,
  connectBus,
  ensureInfrastructure,
  startNatsCluster,
} from '../src/index.ts';
import type { Bus, NatsClusterHandle } from '../src/index.ts';
import { tempDir } from './helpers.ts';

const STREAMS = [EVENTS_STREAM, RUNS_STREAM];
const BUCKETS = [`KV_${FLEET_BUCKET}`, `KV_${REVOCATIONS_BUCKET}`, `OBJ_${ARTIFACTS_OBJECT_STORE}`];

/**
 * The servers serving a stream or consumer: its leader and its replicas; 0
 * while it has no leader (just after a scale, the info lists the peers
 * without one, and a consumer's counts read 0 until one is elected).
 */
function peersOf(info: StreamInfo | ConsumerInfo): number {
  const leader = info.cluster?.leader;
  if (leader === undefined || leader === '') return 0;
  return new Set([leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)]).size;
}

/** Reads `info` until `accept` holds: a scaled stream or consumer elects its new peers in the background. */
async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await sleep(100);
  }
}

describe('ensureInfrastructure on a 3-node cluster', () => {
  let cluster: NatsClusterHandle;
  let bus: Bus;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    dir = await tempDir('infra-cluster');
    cluster = await startNatsCluster({ size: 3, storeDir: dir.path });
    bus = await connectBus({ servers: cluster.urls.join(','), name: 'infra-cluster-test' });
  });

  afterAll(async () => {
    await bus?.close();
    await cluster?.stop();
    await dir?.remove();
  });

  beforeEach(async () => {
    for (const name of (await bus.jsm.streams.names().next()) ?? []) {
      // A stream still electing the peers a scale gave it does not answer its deletion.
      await eventually(
        () => bus.jsm.streams.info(name),
        (info) => peersOf(info) === info.config.num_replicas,
      );
      await bus.jsm.streams.delete(name);
    }
  });

  const replicasOf = async (stream: string) => (await bus.jsm.streams.info(stream)).config.num_replicas;
  const streamPeers = (stream: string) =>
    eventually(
      () => bus.jsm.streams.info(stream),
      (info) => peersOf(info) === 3,
    ).then(peersOf);

  it('creates both streams, both KV buckets and the object store with three replicas', async () => {
    const report = await ensureInfrastructure(bus, { replicas: 3 });
    expect(report.streams).toEqual({ [EVENTS_STREAM]: 'created', [RUNS_STREAM]: 'created' });
    expect(report.buckets).toEqual(Object.fromEntries(BUCKETS.map((b) => [b, 'created'])));
    for (const stream of [...STREAMS, ...BUCKETS]) {
      expect(await replicasOf(stream), stream).toBe(3);
      expect(await streamPeers(stream), stream).toBe(3);
    }
  });

  it('changes nothing when run again with the same count', async () => {
    await ensureInfrastructure(bus, { replicas: 3 });
    const again = await ensureInfrastructure(bus, { replicas: 3 });
    expect(again.streams).toEqual({ [EVENTS_STREAM]: 'unchanged', [RUNS_STREAM]: 'unchanged' });
    expect(again.buckets).toEqual(Object.fromEntries(BUCKETS.map((b) => [b, 'unchanged'])));
  });

  it('gives durable consumers that set no replica count (the executors’, the session’s) three replicas', async () => {
    await ensureInfrastructure(bus, { replicas: 3 });
    // The shapes of run-executor's work-queue consumers and session's durable consumer: no num_replicas.
    await bus.jsm.consumers.add(RUNS_STREAM, {
      durable_name: 'executors-normal',
      filter_subject: 'ars.runs.normal',
      ack_policy: AckPolicy.Explicit,
    });
    await bus.jsm.consumers.add(EVENTS_STREAM, {
      durable_name: 'session-history',
      filter_subject: 'ars.ev.>',
      ack_policy: AckPolicy.Explicit,
    });
    for (const [stream, durable] of [
      [RUNS_STREAM, 'executors-normal'],
      [EVENTS_STREAM, 'session-history'],
    ] as const) {
      const info = await eventually(
        () => bus.jsm.consumers.info(stream, durable),
        (i) => peersOf(i) === 3,
      );
      expect(peersOf(info), durable).toBe(3);
    }
  });

  it('scales a single-replica installation to three replicas, its consumers with it', async () => {
    await ensureInfrastructure(bus, { replicas: 1 });
    await bus.jsm.consumers.add(RUNS_STREAM, {
      durable_name: 'executors-high',
      filter_subject: 'ars.runs.high',
      ack_policy: AckPolicy.Explicit,
    });
    await bus.js.publish('ars.runs.high', 'queued before the scale-up', { msgID: 'scale-1' });

    const report = await ensureInfrastructure(bus, { replicas: 3 });
    expect(report.streams).toEqual({ [EVENTS_STREAM]: 'updated', [RUNS_STREAM]: 'updated' });
    expect(report.buckets).toEqual(Object.fromEntries(BUCKETS.map((b) => [b, 'updated'])));
    for (const stream of [...STREAMS, ...BUCKETS]) {
      expect(await replicasOf(stream), stream).toBe(3);
      expect(await streamPeers(stream), stream).toBe(3);
    }
    const consumer = await eventually(
      () => bus.jsm.consumers.info(RUNS_STREAM, 'executors-high'),
      (i) => peersOf(i) === 3,
    );
    expect(peersOf(consumer)).toBe(3);
    expect(consumer.num_pending).toBe(1);
  });

  it('warns of each replica count it changes', async () => {
    await ensureInfrastructure(bus, { replicas: 1 });
    // Scaled up only once each new stream has its one peer in place: an update before that times out.
    for (const stream of [...STREAMS, ...BUCKETS]) {
      await eventually(
        () => bus.jsm.streams.info(stream),
        (info) => peersOf(info) === 1,
      );
    }
    const memory = createMemoryLogger();
    await ensureInfrastructure(bus, { replicas: 3, logger: memory.logger });
    const warnings = memory
      .lines()
      .filter((line) => line['msg'] === 'changing the replica count of a JetStream stream');
    expect(warnings.map((w) => w['stream']).sort()).toEqual([...STREAMS, ...BUCKETS].sort());
    expect(warnings[0]).toMatchObject({ level: 40, from: 1, to: 3 });
  });

  it('fails naming the stream and the count when the cluster has fewer servers than replicas', async () => {
    await expect(ensureInfrastructure(bus, { replicas: 5 })).rejects.toThrow(
      /JetStream refused stream EVENTS with 5 replica\(s\): no suitable peers for placement/,
    );
  });

  it('scales back down to one replica when asked', async () => {
    await ensureInfrastructure(bus, { replicas: 3 });
    // An installation that has run a while: each stream has its leader (an update before that times out).
    for (const stream of [...STREAMS, ...BUCKETS]) await streamPeers(stream);
    const report = await ensureInfrastructure(bus, { replicas: 1 });
    expect(Object.values({ ...report.streams, ...report.buckets })).toEqual(Array(5).fill('updated'));
    for (const stream of [...STREAMS, ...BUCKETS]) expect(await replicasOf(stream), stream).toBe(1);
  });
});
