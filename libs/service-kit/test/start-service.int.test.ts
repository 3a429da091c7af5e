import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pingServices, rpcSubject, startNatsServer } from '@ars/bus';
import type { NatsServerHandle, ServiceInfo } from '@ars/bus';
import { methodsOfService } from '@ars/contracts';
import type { MethodDef } from '@ars/contracts';
import type { Store } from '@ars/store';
import { BaseServiceConfig, HEALTH_METHOD, defineService } from '../src/index.ts';
import { outcomeOf, startInProcess, TEST_IDENTITY } from '../src/testing.ts';
import type { InProcessService } from '../src/testing.ts';

const owned = methodsOfService('memory');
// The implemented method: one whose request accepts the smallest body, so the test needs no domain knowledge.
const implemented: MethodDef | undefined = owned.find((m) => m.request.safeParse({ identity: {} }).success);
const unbuilt = owned.filter((m) => m !== implemented);

let stopCalls = 0;
const fake = defineService({
  name: 'memory',
  version: '1.2.3',
  config: BaseServiceConfig,
  build: async (context) => ({
    handlers: {
      [implemented!.name]: async (request) => ({
        echo: request.body,
        caller: request.identity.user,
        instance: context.instanceId,
      }),
    },
    stop: async () => {
      stopCalls += 1;
    },
  }),
});

describe('startService', () => {
  let storeDir: string;
  let nats: NatsServerHandle;
  let service: InProcessService;
  let discovery: Promise<ServiceInfo | undefined> | undefined;
  // One $SRV.INFO round (it waits out stragglers) shared by the discovery tests.
  const discovered = () =>
    (discovery ??= pingServices(service.bus, { timeoutMs: 2000, name: 'memory' }).then(([info]) => info));

  beforeAll(async () => {
    storeDir = await mkdtemp(join(tmpdir(), 'ars-service-kit-'));
    nats = await startNatsServer({ storeDir });
    service = await startInProcess(fake, { natsUrl: nats.url, env: { INSTANCE_ID: 'memory-test-1' } });
  });

  afterAll(async () => {
    await service?.stop();
    await nats?.stop();
    await rm(storeDir, { recursive: true, force: true });
  });

  it('finds a memory method to implement and others to leave unbuilt', () => {
    expect(implemented).toBeDefined();
    expect(unbuilt.length).toBeGreaterThan(0);
  });

  it('answers an implemented method with its handler', async () => {
    await expect(service.call(implemented!.name, { identity: {} })).resolves.toMatchObject({
      echo: { identity: {} },
      caller: TEST_IDENTITY.user,
      instance: 'memory-test-1',
    });
  });

  it('answers every unbuilt method with unimplemented', async () => {
    const outcomes = await Promise.all(unbuilt.map((m) => outcomeOf(service.call(m.name, { identity: {} }))));
    expect(new Set(outcomes.map((o) => (o.ok ? 'ok' : o.code)))).toEqual(new Set(['unimplemented']));
    expect(outcomes[0]).toMatchObject({ message: `${unbuilt[0]!.name} is not implemented yet` });
  });

  it('refuses a bad body with invalid_request naming the failing path', async () => {
    const outcome = await outcomeOf(service.call(implemented!.name, { identity: { tenant: 42 } }));
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(outcome.ok ? '' : outcome.message).toContain('identity.tenant');
  });

  it('answers _health with ok checks', async () => {
    await expect(service.call(HEALTH_METHOD, {})).resolves.toMatchObject({
      service: 'memory',
      instance_id: 'memory-test-1',
      version: '1.2.3',
      status: 'ok',
      checks: { nats: 'ok', store: 'ok' },
      store_kind: 'embedded',
    });
  });

  it('registers one services-API endpoint per owned method plus _health', async () => {
    const info = await discovered();
    const subjects = info?.endpoints.map((e) => e.subject).sort();
    expect(subjects).toEqual(
      [...owned.map((m) => rpcSubject('memory', m.name)), rpcSubject('memory', HEALTH_METHOD)].sort(),
    );
  });

  it('marks each endpoint implemented or not in its metadata', async () => {
    const info = await discovered();
    const marks = Object.fromEntries(
      (info?.endpoints ?? []).map((e) => [e.metadata?.['method'], e.metadata?.['implemented']]),
    );
    expect(marks).toEqual({
      ...Object.fromEntries(unbuilt.map((m) => [m.name, 'false'])),
      [implemented!.name]: 'true',
      [HEALTH_METHOD]: 'true',
    });
  });

  it('reports instance id, store kind and build version in the service metadata', async () => {
    const info = await discovered();
    expect(info?.metadata).toMatchObject({
      instance_id: 'memory-test-1',
      store_kind: 'embedded',
      build_version: '1.2.3',
    });
  });

  it('stops cleanly, once, however often stop is called', async () => {
    await Promise.all([service.running.stop(), service.running.stop()]);
    await service.running.stop();
    expect(stopCalls).toBe(1);
    const outcome = await outcomeOf(service.rpc.call('memory', HEALTH_METHOD, TEST_IDENTITY, {}, { timeoutMs: 1000 }));
    expect(outcome).toMatchObject({ ok: false, code: 'unavailable' });
  });
});

describe('startService on the embedded store', () => {
  let root: string;
  let nats: NatsServerHandle;
  const replicas: InProcessService[] = [];
  const stores: Store[] = [];
  const recording = defineService({
    name: 'memory',
    version: '1.2.3',
    config: BaseServiceConfig,
    build: async (context) => {
      stores.push(context.store);
      return { handlers: {} };
    },
  });
  const startReplica = (engine: string) =>
    startInProcess(recording, {
      natsUrl: nats.url,
      env: { DATA_DIR: join(root, 'data'), STORE_ENGINE: engine },
      inMemoryStore: false,
    });

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ars-service-kit-store-'));
    nats = await startNatsServer({ storeDir: join(root, 'nats') });
  });

  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    await nats?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('puts the sqlite engine under DATA_DIR/<service>/<database> and shares it between replicas', async () => {
    replicas.push(await startReplica('sqlite'), await startReplica('sqlite'));
    await expect(access(join(root, 'data', 'memory', 'ars_memory', 'store.sqlite'))).resolves.toBeUndefined();
    const [first, second] = stores.slice(-2).map((store) => store.collection<{ _id: string; n: number }>('shared'));
    await first!.insertOne({ _id: 'a', n: 1 });
    await second!.updateOne({ _id: 'a' }, { $inc: { n: 1 } });
    expect(await first!.findOne({ _id: 'a' })).toEqual({ _id: 'a', n: 2 });
  });
});
