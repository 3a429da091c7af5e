import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';
import { createLogger } from '@ars/telemetry';
import { readGatewayConfig } from '../src/config.ts';
import { startGateway } from '../src/server.ts';

/** GET /readyz on a new connection, as kubelet probes: the status, or `refused`. */
function readyz(base: string): Promise<number | 'refused'> {
  return new Promise((resolve) => {
    get(`${base}/readyz`, { agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', () => resolve('refused'));
  });
}

describe('the gateway’s readiness while it stops', () => {
  let dir: string;
  let nats: NatsServerHandle;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-gateway-stopping-'));
    nats = await startNatsServer({ storeDir: join(dir, 'nats') });
  });

  afterAll(async () => {
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('fails /readyz from the moment stop begins', async () => {
    const config = readGatewayConfig({ NATS_URL: nats.url, LOG_LEVEL: 'silent', BUILD_COMMIT: 'int' });
    const gateway = await startGateway(config, { logger: createLogger({ name: 'gateway-stopping', level: 'silent' }) });
    const base = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
    expect(await readyz(base)).toBe(200);
    const stopped = gateway.stop();
    const during = await readyz(base);
    await stopped;
    // fastify answers 503 while it closes (return503OnClosing), and refuses connections once closed.
    expect([503, 'refused']).toContain(during);
  });
});
