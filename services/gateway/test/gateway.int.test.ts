import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectBus, serveService, startNatsServer } from '@ars/bus';
import type { Bus, NatsServerHandle, ServedService } from '@ars/bus';
import { InMemorySpanExporter, SpanKind, createLogger } from '@ars/telemetry';
import type { ReadableSpan } from '@ars/telemetry';
import { readGatewayConfig } from '../src/config.ts';
import { startGateway } from '../src/server.ts';
import type { GatewayRuntime } from '../src/server.ts';
import { bodyFor, routeOf } from './support/bodies.ts';

const logger = createLogger({ name: 'gateway-int', level: 'silent' });
const exporter = new InMemorySpanExporter();

let dir: string;
let nats: NatsServerHandle;
let gateway: GatewayRuntime;
let serviceBus: Bus;
let session: ServedService;

/** A tiny in-process `session` service: echoes what it receives, answers `_health`. */
async function startTinySession(bus: Bus): Promise<ServedService> {
  return serveService(bus, {
    service: 'session',
    version: '0.1.0',
    instanceId: 'session-int',
    logger,
    handlers: {
      'sessions.inspect': async (request) => ({ received: request.body, identity: request.identity }),
      _health: async () => ({
        service: 'session',
        instance_id: 'session-int',
        version: '0.1.0',
        status: 'ok',
        checks: { nats: 'ok', store: 'ok' },
        uptime_seconds: 1,
      }),
    },
    endpointMetadata: {
      'sessions.inspect': { method: 'sessions.inspect', implemented: 'true' },
      _health: { method: '_health', implemented: 'true' },
    },
    metadata: { instance_id: 'session-int', store_kind: 'embedded' },
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ars-gateway-int-'));
  nats = await startNatsServer({ storeDir: join(dir, 'nats') });
  const config = readGatewayConfig({
    NATS_URL: nats.url,
    LOG_LEVEL: 'silent',
    INSTANCE_ID: 'gateway-int',
    BUILD_COMMIT: 'int-commit',
    ARS_CAPABILITIES_CACHE_MS: '0',
    ARS_RPC_TIMEOUT_MS: '2000',
  });
  gateway = await startGateway(config, { logger, spanExporter: exporter });
  serviceBus = await connectBus({ servers: nats.url, name: 'session-int' });
  session = await startTinySession(serviceBus);
});

afterAll(async () => {
  await session?.stop();
  await serviceBus?.close();
  await gateway?.stop();
  await nats?.stop();
  await rm(dir, { recursive: true, force: true });
});

const post = (name: string, body: unknown, headers: Record<string, string> = {}) =>
  gateway.app.inject({
    method: 'POST',
    url: routeOf(name),
    headers: { authorization: `Bearer ${gateway.devToken}`, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });

describe('gateway over a real NATS server', () => {
  it('mints a dev token at boot', () => {
    expect(gateway.devToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('round-trips a call through NATS to the owning service', async () => {
    const response = await post('sessions.inspect', bodyFor('sessions.inspect'), { 'x-service-session': 'conv-int' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      identity: { tenant: 'dev', user: 'dev', session: 'conv-int', scopes: ['admin', 'console:fleet'] },
      received: { identity: { tenant: 'dev', user: 'dev', session: 'conv-int' } },
    });
  });

  it('carries one trace id from the HTTP request through NATS into the service', async () => {
    exporter.reset();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await post('sessions.inspect', bodyFor('sessions.inspect'), {
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    });
    expect(response.statusCode).toBe(200);
    const spans = await vi.waitFor(() => {
      const finished = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
      const kinds = finished.map((span) => span.name);
      expect(kinds).toEqual(
        expect.arrayContaining([`POST ${routeOf('sessions.inspect')}`, 'session/sessions.inspect']),
      );
      expect(finished.length).toBeGreaterThanOrEqual(2);
      return finished;
    });
    const byName = (name: string): ReadableSpan[] => spans.filter((span) => span.name === name);
    const [server] = byName(`POST ${routeOf('sessions.inspect')}`);
    const remote = byName('session/sessions.inspect').find((span) => span.kind === SpanKind.SERVER);
    // caller → gateway HTTP span → the service's server span (a call that succeeds makes no CLIENT span by default)
    expect(server?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(remote?.parentSpanContext?.spanId).toBe(server?.spanContext().spanId);
    expect(byName('session/sessions.inspect').some((span) => span.kind === SpanKind.CLIENT)).toBe(false);
  });

  it('answers 503 unavailable when no instance of the owner is running', async () => {
    const response = await post('memory.get', bodyFor('memory.get'));
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'unavailable' });
  });

  it('reports the gateway and the live service in topology.snapshot', async () => {
    const response = await post('topology.snapshot', { identity: {} });
    expect(response.statusCode, response.body).toBe(200);
    const services = response.json().services as { service: string; instances: { unimplemented: string[] }[] }[];
    expect(services.map((row) => row.service)).toEqual(expect.arrayContaining(['gateway', 'session']));
    const gatewayInstance = services.find((row) => row.service === 'gateway')?.instances[0];
    // Every gateway-owned method is built.
    expect(gatewayInstance?.unimplemented).toEqual([]);
  });

  it('asks each service for its health in runtime.health', async () => {
    const response = await post('runtime.health', { identity: {} });
    const rows = response.json().services as { service: string; status: string }[];
    expect(rows.find((row) => row.service === 'session')).toMatchObject({ status: 'ok' });
    expect(rows.find((row) => row.service === 'memory')).toMatchObject({ status: 'down' });
    expect(response.json().status).toBe('degraded');
  });

  it('answers runtime.info with the boot facts', async () => {
    const response = await post('runtime.info', { identity: {} });
    expect(response.json()).toMatchObject({
      instance_id: 'gateway-int',
      build_commit: 'int-commit',
      build_go_version: process.version,
    });
    expect(response.json().capabilities).toContain('topology_snapshot');
  });

  it('counts requests per endpoint in runtime.counters', async () => {
    const response = await post('runtime.counters', { identity: {} });
    const session = response.json().services.find((row: { service: string }) => row.service === 'session');
    const inspect = session.endpoints.find((row: { method: string }) => row.method === 'sessions.inspect');
    expect(inspect.num_requests).toBeGreaterThanOrEqual(2);
  });
});
