import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { method, routeOf } from './support/bodies.ts';
import { createHarness, liveInstance } from './support/harness.ts';
import type { Harness } from './support/harness.ts';

let h: Harness;

beforeEach(async () => {
  h = await createHarness();
});

afterEach(async () => {
  await h.close();
});

const ADMIN = { scopes: ['admin'] };

const read = async (name: string) => {
  const response = await h.post(routeOf(name), { identity: {} }, { token: h.token(ADMIN) });
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json();
  const parsed = method(name).response.safeParse(body);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  return body;
};

const healthy = (service: string) => ({
  service,
  instance_id: `${service}-1`,
  version: '0.1.0',
  status: 'ok' as const,
  checks: { nats: 'ok', store: 'ok' },
  uptime_seconds: 5,
});

const OWNERS = ['agent-registry', 'artifact', 'governance', 'memory', 'run-executor', 'session'];

function fleetUp(): void {
  h.discovery.instances = OWNERS.map((service) =>
    liveInstance(service, [`${service}.x`], { metadata: { store_kind: 'embedded' } }),
  );
  for (const service of OWNERS) h.discovery.reports.set(service, healthy(service));
}

describe('runtime.health', () => {
  it('is ok when NATS is up and every service answers ok', async () => {
    fleetUp();
    const health = await read('runtime.health');
    expect(health.status).toBe('ok');
    expect(health.services.map((row: { service: string }) => row.service)).toEqual(['gateway', ...OWNERS]);
  });

  it('is degraded when a service does not answer, and names it down', async () => {
    fleetUp();
    h.discovery.reports.delete('memory');
    const health = await read('runtime.health');
    expect(health.status).toBe('degraded');
    expect(health.services.find((row: { service: string }) => row.service === 'memory')).toMatchObject({
      status: 'down',
    });
  });

  it('is degraded when a service reports degraded', async () => {
    fleetUp();
    h.discovery.reports.set('session', {
      ...healthy('session'),
      status: 'degraded',
      checks: { nats: 'ok', store: 'failed' },
    });
    const health = await read('runtime.health');
    expect(health.status).toBe('degraded');
    expect(health.services.find((row: { service: string }) => row.service === 'session')).toMatchObject({
      status: 'degraded',
      checks: { store: 'failed' },
    });
  });

  it('is down when NATS is not connected', async () => {
    fleetUp();
    h.bus.connected = false;
    const health = await read('runtime.health');
    expect(health.status).toBe('down');
  });
});

describe('runtime.counters and metrics.snapshot', () => {
  beforeEach(() => {
    h.discovery.instanceStats = [
      {
        name: 'run-executor',
        id: 're-1',
        version: '0.1.0',
        started: '2025-01-01T00:00:00.000Z',
        endpoints: [
          {
            name: 'tasks-get',
            subject: 'ars.rpc.run-executor.tasks.get',
            num_requests: 7,
            num_errors: 2,
            processing_time: 7_000_000,
            average_processing_time: 1_000_000,
          },
        ],
      },
      {
        name: 'run-executor',
        id: 're-2',
        version: '0.1.0',
        started: '2025-01-01T00:00:00.000Z',
        endpoints: [
          {
            name: 'tasks-get',
            subject: 'ars.rpc.run-executor.tasks.get',
            num_requests: 3,
            num_errors: 0,
            processing_time: 3_000_000,
            average_processing_time: 1_000_000,
          },
        ],
      },
    ];
  });

  it('reports requests, errors and processing time per instance and method', async () => {
    const counters = await read('runtime.counters');
    expect(counters.services[0]).toMatchObject({
      service: 'run-executor',
      instance_id: 're-1',
      endpoints: [{ method: 'tasks.get', num_requests: 7, num_errors: 2, processing_time_ns: 7_000_000 }],
    });
  });

  it('includes the gateway HTTP counters', async () => {
    await h.post(routeOf('runtime.info'), { identity: {} });
    await h.post('/v1/control/nope', { identity: {} });
    const counters = await read('runtime.counters');
    expect(counters.gateway.http.requests).toBeGreaterThanOrEqual(2);
    expect(counters.gateway.http.by_method['runtime.info'].requests).toBe(1);
    expect(counters.gateway.http.responses_4xx).toBeGreaterThanOrEqual(1);
  });

  it('sums the fleet into named counters and gauges', async () => {
    const snapshot = await read('metrics.snapshot');
    expect(snapshot.counters).toMatchObject({ 'rpc.requests': 10, 'rpc.errors': 2, 'rpc.run-executor.requests': 10 });
    expect(snapshot.gauges).toMatchObject({ 'services.instances': 2, 'services.run-executor.instances': 2 });
  });
});

describe('runtime.drivers', () => {
  it('lists the bus, each service store kind, the blob driver and the LLM providers', async () => {
    h.discovery.instances = [
      liveInstance('artifact', ['artifacts.get'], {
        metadata: { store_kind: 'mongodb', blob_driver: 'jetstream-object-store' },
      }),
      liveInstance('run-executor', ['start'], {
        metadata: { store_kind: 'embedded', llm_providers: 'scripted,openai' },
      }),
    ];
    const { drivers } = await read('runtime.drivers');
    expect(drivers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'bus', name: 'nats' }),
        expect.objectContaining({ kind: 'store', name: 'mongodb', service: 'artifact' }),
        expect.objectContaining({ kind: 'store', name: 'embedded', service: 'run-executor' }),
        expect.objectContaining({ kind: 'blob', name: 'jetstream-object-store', service: 'artifact' }),
        expect.objectContaining({ kind: 'llm', name: 'scripted' }),
        expect.objectContaining({ kind: 'llm', name: 'openai' }),
      ]),
    );
  });
});

describe('topology.snapshot', () => {
  it('lists services, instances, versions and endpoints', async () => {
    h.discovery.instances = [
      liveInstance('session', ['sessions.list', 'sessions.inspect'], { id: 's-1', version: '0.1.0' }),
      liveInstance('session', ['sessions.list', 'sessions.inspect'], {
        id: 's-2',
        version: '0.1.1',
        implemented: false,
      }),
    ];
    const topology = await read('topology.snapshot');
    expect(topology.services).toEqual([
      {
        service: 'session',
        instances: [
          expect.objectContaining({
            instance_id: 's-1',
            version: '0.1.0',
            endpoints: ['sessions.list', 'sessions.inspect'],
            unimplemented: [],
          }),
          expect.objectContaining({
            instance_id: 's-2',
            version: '0.1.1',
            unimplemented: ['sessions.list', 'sessions.inspect'],
          }),
        ],
      },
    ]);
  });
});

describe('operational routes', () => {
  it('answers GET /healthz without authentication', async () => {
    const response = await h.send('GET', '/healthz', undefined, { token: null });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });

  it('answers GET /readyz with 200 while NATS is connected', async () => {
    expect((await h.send('GET', '/readyz', undefined, { token: null })).statusCode).toBe(200);
  });

  it('answers GET /readyz with 503 unavailable while NATS is disconnected', async () => {
    h.bus.connected = false;
    const response = await h.send('GET', '/readyz', undefined, { token: null });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'unavailable' });
  });

  it('serves the OpenAPI 3.1 document at GET /openapi.json', async () => {
    const response = await h.send('GET', '/openapi.json', undefined, { token: null });
    expect(response.statusCode).toBe(200);
    expect(response.json().openapi).toMatch(/^3\.1\./);
  });
});
