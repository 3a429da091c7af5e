import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ARTIFACTS_OBJECT_STORE,
  DUPLICATE_WINDOW_MS,
  EVENTS_STREAM,
  FLEET_BUCKET,
  REVOCATIONS_BUCKET,
  RUNS_STREAM,
  connectBus,
  ensureInfrastructure,
  openKv,
  openObjectStore,
  startNatsServer,
} from '../src/index.ts';
import type { Bus, NatsServerHandle } from '../src/index.ts';
import { tempDir } from './helpers.ts';

const NS_PER_MS = 1_000_000;

describe('ensureInfrastructure', () => {
  let server: NatsServerHandle;
  let bus: Bus;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    dir = await tempDir('infra');
    server = await startNatsServer({ storeDir: dir.path });
    bus = await connectBus({ servers: server.url, name: 'infra-test' });
  });

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
    await dir?.remove();
  });

  it('creates the streams, then reports them unchanged on a second call', async () => {
    const first = await ensureInfrastructure(bus);
    const second = await ensureInfrastructure(bus);
    expect(first.streams).toEqual({ [EVENTS_STREAM]: 'created', [RUNS_STREAM]: 'created' });
    expect(second.streams).toEqual({ [EVENTS_STREAM]: 'unchanged', [RUNS_STREAM]: 'unchanged' });
  });

  it('configures EVENTS as a file-backed 7-day stream with a 2-minute duplicate window', async () => {
    await ensureInfrastructure(bus);
    const { config } = await bus.jsm.streams.info(EVENTS_STREAM);
    expect(config).toMatchObject({
      subjects: ['ars.ev.>'],
      storage: 'file',
      retention: 'limits',
      max_age: 7 * 24 * 3_600_000 * NS_PER_MS,
      duplicate_window: DUPLICATE_WINDOW_MS * NS_PER_MS,
    });
  });

  it('configures RUNS as a file-backed work queue', async () => {
    await ensureInfrastructure(bus);
    const { config } = await bus.jsm.streams.info(RUNS_STREAM);
    expect(config).toMatchObject({ subjects: ['ars.runs.>'], storage: 'file', retention: 'workqueue' });
  });

  it('updates the EVENTS limits when the options change', async () => {
    await ensureInfrastructure(bus);
    const report = await ensureInfrastructure(bus, { eventsMaxAgeMs: 3_600_000, eventsMaxBytes: 1 << 30 });
    expect(report.streams[EVENTS_STREAM]).toBe('updated');
    const { config } = await bus.jsm.streams.info(EVENTS_STREAM);
    expect(config.max_age).toBe(3_600_000 * NS_PER_MS);
    expect(config.max_bytes).toBe(1 << 30);
    await ensureInfrastructure(bus);
  });

  it('keeps the EVENTS limits a gateway set when a service boots with keepEventsRetention', async () => {
    await ensureInfrastructure(bus, { eventsMaxAgeMs: 7_200_000, eventsMaxBytes: 1 << 29 });
    const report = await ensureInfrastructure(bus, { keepEventsRetention: true });
    expect(report.streams[EVENTS_STREAM]).toBe('unchanged');
    const { config } = await bus.jsm.streams.info(EVENTS_STREAM);
    expect(config.max_age).toBe(7_200_000 * NS_PER_MS);
    expect(config.max_bytes).toBe(1 << 29);
  });

  it('creates the KV buckets and the object store', async () => {
    await ensureInfrastructure(bus);
    for (const bucket of [FLEET_BUCKET, REVOCATIONS_BUCKET]) {
      const kv = await openKv(bus, bucket);
      await kv.put('k', 'v');
      expect((await kv.get('k'))?.string()).toBe('v');
      expect((await bus.jsm.streams.info(`KV_${bucket}`)).config.storage).toBe('file');
    }
    const store = await openObjectStore(bus);
    await store.putBlob({ name: 'a' }, new Uint8Array([1, 2, 3]));
    expect([...((await store.getBlob('a')) ?? [])]).toEqual([1, 2, 3]);
    expect((await bus.jsm.streams.info(`OBJ_${ARTIFACTS_OBJECT_STORE}`)).config.storage).toBe('file');
  });

  it('creates the KV buckets and the object store with one replica, and reports them', async () => {
    const report = await ensureInfrastructure(bus);
    const names = [`KV_${FLEET_BUCKET}`, `KV_${REVOCATIONS_BUCKET}`, `OBJ_${ARTIFACTS_OBJECT_STORE}`];
    expect(Object.keys(report.buckets).sort()).toEqual(names.sort());
    for (const name of names) expect((await bus.jsm.streams.info(name)).config.num_replicas).toBe(1);
  });

  it('refuses more than one replica on a server outside a cluster, changing nothing', async () => {
    await ensureInfrastructure(bus);
    await expect(ensureInfrastructure(bus, { replicas: 3 })).rejects.toThrow(
      /JetStream replicas 3 need a clustered nats-server/,
    );
    expect((await bus.jsm.streams.info(EVENTS_STREAM)).config.num_replicas).toBe(1);
  });

  it('converges when several services run it at the same time', async () => {
    const names = (await bus.jsm.streams.names().next()) ?? [];
    for (const name of names) await bus.jsm.streams.delete(name);
    const other = await connectBus({ servers: server.url, name: 'infra-test-2' });
    try {
      await Promise.all([ensureInfrastructure(bus), ensureInfrastructure(other), ensureInfrastructure(bus)]);
    } finally {
      await other.close();
    }
    const after = ((await bus.jsm.streams.names().next()) ?? []).sort();
    expect(after).toEqual(
      [
        EVENTS_STREAM,
        RUNS_STREAM,
        `KV_${FLEET_BUCKET}`,
        `KV_${REVOCATIONS_BUCKET}`,
        `OBJ_${ARTIFACTS_OBJECT_STORE}`,
      ].sort(),
    );
  });
});
