import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { counterFamily, initMetrics } from '../src/index.ts';

/** An in-process OTLP/HTTP receiver: keeps what is posted to /v1/metrics. */
function receiver(): Promise<{ server: Server; url: string; bodies: { type: string; text: string }[] }> {
  const bodies: { type: string; text: string }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/metrics') {
        bodies.push({ type: request.headers['content-type'] ?? '', text: Buffer.concat(chunks).toString('utf8') });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      resolve({ server, url: `http://127.0.0.1:${port}`, bodies });
    });
  });
}

describe('OTLP metrics export', () => {
  let otlp: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    otlp = await receiver();
  });

  afterAll(async () => {
    await new Promise((resolve) => otlp?.server.close(resolve));
  });

  it('posts the bound series to <endpoint>/v1/metrics, flushed when the last service stops', async () => {
    const metrics = initMetrics({ serviceName: 'otlp-test', otlpEndpoint: `${otlp.url}/`, exportIntervalMs: 60_000 });
    counterFamily('test.otlp.runs', { description: 'runs', unit: '{run}' }).bind(metrics.service).add(5);
    await metrics.shutdown();

    expect(otlp.bodies.length).toBeGreaterThan(0);
    const body = otlp.bodies.at(-1)!;
    expect(body.type).toContain('application/json');
    const text = body.text;
    expect(text).toContain('"test.otlp.runs"');
    expect(text).toContain('"otlp-test"');
    const parsed = JSON.parse(text) as {
      resourceMetrics: {
        scopeMetrics: { metrics: { name: string; sum?: { dataPoints: { asDouble?: number }[] } }[] }[];
      }[];
    };
    const metric = parsed.resourceMetrics
      .flatMap((r) => r.scopeMetrics)
      .flatMap((s) => s.metrics)
      .find((m) => m.name === 'test.otlp.runs');
    expect(metric?.sum?.dataPoints[0]?.asDouble).toBe(5);
  });
});
