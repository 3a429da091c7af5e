import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort, startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';
import { BaseServiceConfig, defineService } from '../src/index.ts';
import { startInProcess } from '../src/testing.ts';
import type { InProcessService } from '../src/testing.ts';

interface Probe {
  readonly status: number;
  readonly body: unknown;
  readonly allow: string | null;
}

async function probe(port: number, path: string, method = 'GET'): Promise<Probe> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method });
  const text = await response.text();
  return {
    status: response.status,
    body: text === '' ? undefined : JSON.parse(text),
    allow: response.headers.get('allow'),
  };
}

/** Probes until `accept` holds: a dropped NATS connection is noticed by the client, not announced. */
async function probeUntil(
  port: number,
  path: string,
  accept: (p: Probe) => boolean,
  timeoutMs = 15_000,
): Promise<Probe> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await probe(port, path);
    if (accept(answer) || Date.now() > deadline) return answer;
    await sleep(50);
  }
}

/** A service whose build and stop each wait for the test to let them go. */
function gatedService() {
  const building = Promise.withResolvers<void>();
  const build = Promise.withResolvers<void>();
  const stopping = Promise.withResolvers<void>();
  const stop = Promise.withResolvers<void>();
  const definition = defineService({
    name: 'memory',
    version: '1.0.0',
    config: BaseServiceConfig,
    build: async () => {
      building.resolve();
      await build.promise;
      return {
        handlers: {},
        stop: async () => {
          stopping.resolve();
          await stop.promise;
        },
      };
    },
  });
  return {
    definition,
    /** Resolves once build runs: the probe server listens by then. */
    building: building.promise,
    finishBuild: () => build.resolve(),
    /** Resolves once the service's stop runs. */
    stopping: stopping.promise,
    finishStop: () => stop.resolve(),
  };
}

const plain = defineService({
  name: 'memory',
  version: '1.0.0',
  config: BaseServiceConfig,
  build: async () => ({ handlers: {} }),
});

describe('the probe server of a service started with HEALTH_PORT', () => {
  let root: string;
  let nats: NatsServerHandle;
  const started: InProcessService[] = [];

  const start = async (definition: typeof plain, port: number) => {
    const service = await startInProcess(definition, {
      natsUrl: nats.url,
      env: { HEALTH_PORT: String(port), HEALTH_HOST: '127.0.0.1' },
    });
    started.push(service);
    return service;
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ars-probes-'));
    nats = await startNatsServer({ storeDir: root });
  });

  afterEach(async () => {
    for (const service of started.splice(0)) await service.stop();
  });

  afterAll(async () => {
    await nats?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('answers liveness with 200 ok', async () => {
    const port = await findFreePort();
    await start(plain, port);
    expect(await probe(port, '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('answers readiness with 200 once the service serves, NATS and the store answering', async () => {
    const port = await findFreePort();
    await start(plain, port);
    expect(await probe(port, '/readyz')).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: { nats: 'ok', store: 'ok' } },
    });
  });

  it('answers readiness with 503 starting, and liveness with 200, while the service is still starting', async () => {
    const port = await findFreePort();
    const gated = gatedService();
    gated.finishStop();
    const starting = start(gated.definition, port);
    await gated.building;
    expect(await probe(port, '/readyz')).toMatchObject({ status: 503, body: { status: 'starting', checks: {} } });
    expect(await probe(port, '/healthz')).toMatchObject({ status: 200 });
    gated.finishBuild();
    await starting;
    expect(await probe(port, '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  it('answers readiness with 503 stopping as soon as stop begins, and closes when stop ends', async () => {
    const port = await findFreePort();
    const gated = gatedService();
    gated.finishBuild();
    const service = await startInProcess(gated.definition, {
      natsUrl: nats.url,
      env: { HEALTH_PORT: String(port), HEALTH_HOST: '127.0.0.1' },
    });
    const stopped = service.stop();
    await gated.stopping;
    expect(await probe(port, '/readyz')).toMatchObject({ status: 503, body: { status: 'stopping' } });
    expect(await probe(port, '/healthz')).toMatchObject({ status: 200 });
    gated.finishStop();
    await stopped;
    await expect(probe(port, '/healthz')).rejects.toThrow();
  });

  it('answers another path with 404 not_found', async () => {
    const port = await findFreePort();
    await start(plain, port);
    const answer = await probe(port, '/status');
    expect(answer).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((answer.body as { message: string }).message).toContain('/readyz');
  });

  it('serves the process metrics on /metrics: the NATS connection and the served methods of the service', async () => {
    const port = await findFreePort();
    await start(plain, port);
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    expect(text).toContain('ars_nats_connected{ars_service="memory"} 1');
    expect(text).toMatch(/^rpc_server_call_duration_count\{[^}]*rpc_method="_health"[^}]*\} 0$/m);
  });

  it('answers another verb with 405 allowing GET', async () => {
    const port = await findFreePort();
    await start(plain, port);
    expect(await probe(port, '/readyz', 'POST')).toMatchObject({ status: 405, allow: 'GET' });
  });

  it('fails the start naming HEALTH_PORT when the port is taken', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      await expect(start(plain, port)).rejects.toThrow(new RegExp(`HEALTH_PORT=${port} .*in use`));
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});

describe('readiness while NATS is down', () => {
  let root: string;
  let nats: NatsServerHandle;
  let service: InProcessService | undefined;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ars-probes-nats-'));
    nats = await startNatsServer({ storeDir: root });
  });

  afterAll(async () => {
    await service?.stop();
    await nats?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('answers 503 unavailable naming NATS while the server is down, and 200 once it is back', async () => {
    const port = await findFreePort();
    service = await startInProcess(plain, {
      natsUrl: nats.url,
      env: { HEALTH_PORT: String(port), HEALTH_HOST: '127.0.0.1' },
    });
    expect((await probe(port, '/readyz')).status).toBe(200);

    nats.kill();
    const down = await probeUntil(port, '/readyz', (p) => p.status === 503);
    expect(down).toMatchObject({
      status: 503,
      body: { status: 'unavailable', checks: { nats: 'failed', store: 'ok' } },
    });
    expect((await probe(port, '/healthz')).status).toBe(200);

    nats = await nats.restart();
    const back = await probeUntil(port, '/readyz', (p) => p.status === 200);
    expect(back).toMatchObject({ status: 200, body: { status: 'ready' } });
  });
});
