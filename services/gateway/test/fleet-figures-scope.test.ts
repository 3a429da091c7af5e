import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { method, routeOf } from './support/bodies.ts';
import { createHarness, liveInstance } from './support/harness.ts';
import type { Harness } from './support/harness.ts';

// runtime.counters, metrics.snapshot and topology.snapshot cross the tenant
// axis (the spec's cross-tenant table): fleet-wide figures need admin or
// console:fleet (topology.snapshot: admin). A caller without the claim sees
// only its own tenant's figures (issue 32, item 6).

let h: Harness;

beforeEach(async () => {
  h = await createHarness();
  h.discovery.instances = [liveInstance('session', ['sessions.list'], { id: 's-1' })];
  h.discovery.instanceStats = [
    {
      name: 'session',
      id: 's-1',
      version: '0.1.0',
      started: '2025-01-01T00:00:00.000Z',
      endpoints: [
        {
          name: 'sessions-list',
          subject: 'ars.rpc.session.sessions.list',
          num_requests: 40,
          num_errors: 1,
          processing_time: 4_000_000,
          average_processing_time: 100_000,
        },
      ],
    },
  ];
});

afterEach(async () => {
  await h.close();
});

const read = async (name: string, scopes: string[], tenant = 't1') => {
  const response = await h.post(routeOf(name), { identity: {} }, { token: h.token({ tenant, scopes }) });
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json();
  const parsed = method(name).response.safeParse(body);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  return body;
};

/** Traffic of another tenant: three requests, one of them refused. */
async function otherTenantTraffic(): Promise<void> {
  const token = h.token({ tenant: 't2' });
  await h.post(routeOf('runtime.info'), { identity: {} }, { token });
  await h.post(routeOf('runtime.info'), { identity: {} }, { token });
  await h.post(routeOf('sessions.list'), { identity: { tenant: 't3' } }, { token });
}

describe('fleet figures without a cross-tenant claim', () => {
  it('runtime.counters shows a scopeless caller its own tenant’s HTTP figures and no fleet-wide service counters', async () => {
    await otherTenantTraffic();
    await h.post(routeOf('runtime.info'), { identity: {} });
    const counters = await read('runtime.counters', []);
    expect(counters.services).toEqual([]);
    expect(counters.gateway.http.requests).toBe(1);
    expect(Object.keys(counters.gateway.http.by_method)).toEqual(['runtime.info']);
    expect(counters.gateway.http.responses_4xx).toBe(0);
  });

  it('metrics.snapshot shows a scopeless caller its own tenant’s HTTP counters only', async () => {
    await otherTenantTraffic();
    await h.post(routeOf('runtime.info'), { identity: {} });
    const snapshot = await read('metrics.snapshot', []);
    expect(snapshot.counters).toEqual({ 'http.requests': 1, 'http.responses_4xx': 0, 'http.responses_5xx': 0 });
    expect(snapshot.gauges).toEqual({});
  });

  it('topology.snapshot shows a caller without admin no fleet instances', async () => {
    const topology = await read('topology.snapshot', ['console:fleet']);
    expect(topology.services).toEqual([]);
  });
});

describe('fleet figures with the claim', () => {
  it('runtime.counters and metrics.snapshot are fleet-wide for console:fleet', async () => {
    await otherTenantTraffic();
    const counters = await read('runtime.counters', ['console:fleet']);
    expect(counters.services).toHaveLength(1);
    expect(counters.gateway.http.requests).toBeGreaterThanOrEqual(3);
    const snapshot = await read('metrics.snapshot', ['console:fleet']);
    expect(snapshot.counters).toMatchObject({ 'rpc.requests': 40 });
    expect(snapshot.gauges).toMatchObject({ 'services.instances': 1 });
  });

  it('topology.snapshot lists the fleet for admin', async () => {
    const topology = await read('topology.snapshot', ['admin']);
    expect(topology.services).toHaveLength(1);
  });
});
