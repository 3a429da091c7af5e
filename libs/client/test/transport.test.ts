import { afterEach, describe, expect, it } from 'vitest';
import { createClient, isArsError } from '../src/index.ts';
import { defaultTransport, fetchTransport, nodeTransport } from '../src/transport.ts';
import { startLocalServer } from './local-server.ts';
import type { LocalServer } from './local-server.ts';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('client transports', () => {
  it('uses node:http on Node.js', () => {
    expect(defaultTransport).toBe(nodeTransport);
  });

  it('keeps the connection open between calls', async () => {
    const ports: number[] = [];
    server = await startLocalServer((request, response) => {
      ports.push(request.socket.remotePort ?? 0);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
    const client = createClient({ baseUrl: server.baseUrl });
    for (let i = 0; i < 3; i++) await client.call('runtime.info');
    expect(ports).toHaveLength(3);
    expect(new Set(ports).size).toBe(1);
  });

  it('rejects with the abort reason when the signal fires, not as unavailable', async () => {
    server = await startLocalServer(() => undefined); // never answers
    const controller = new AbortController();
    const pending = createClient({ baseUrl: server.baseUrl })
      .call('runtime.info', { identity: {} }, { signal: controller.signal })
      .catch((error: unknown) => error);
    setTimeout(() => controller.abort(), 50);
    const error = await pending;
    expect(isArsError(error)).toBe(false);
    expect(error).toMatchObject({ name: 'AbortError' });
  });

  it('refuses at once with an already aborted signal, sending nothing', async () => {
    server = await startLocalServer((_request, response) => response.end('{}'));
    const error = await createClient({ baseUrl: server.baseUrl })
      .call('runtime.info', { identity: {} }, { signal: AbortSignal.abort() })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(server.requests).toHaveLength(0);
  });

  it('reads the same answer through both transports, multi-byte text included', async () => {
    server = await startLocalServer((_request, response) => {
      response.writeHead(409, 'Conflict', { 'content-type': 'application/json' });
      response.end(JSON.stringify({ code: 'conflict', message: 'déjà vu ✓' }));
    });
    const url = `${server.baseUrl}/v1/control/runtime.info`;
    const viaNode = await nodeTransport(url, '{"q":"ü"}', { 'content-type': 'application/json' });
    const viaFetch = await fetchTransport(url, '{"q":"ü"}', { 'content-type': 'application/json' });
    expect(viaNode).toEqual(viaFetch);
    expect(viaNode).toMatchObject({ status: 409, statusText: 'Conflict' });
    expect(JSON.parse(viaNode.text)).toEqual({ code: 'conflict', message: 'déjà vu ✓' });
    expect(server.requests.map((r) => r.body)).toEqual(['{"q":"ü"}', '{"q":"ü"}']);
  });
});
