import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventFrame } from '@ars/contracts';
import { createClient, isArsError, isControlEvent } from '../src/index.ts';
import type { StreamControlEvent } from '../src/index.ts';
import { startLocalServer } from './local-server.ts';
import type { LocalServer } from './local-server.ts';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const FAST = { initialDelayMs: 5, maxDelayMs: 20 };

function frame(sequence: number, type = 'task.started'): EventFrame {
  return {
    type,
    sequence,
    occurred_at: '2025-01-01T00:00:00Z',
    tenant: 't',
    user: 'u',
    session: 's',
    run: 'r',
    payload: {},
  };
}

function sendFrame(response: ServerResponse, value: EventFrame): void {
  response.write(`id: ${value.sequence}\r\ndata: ${JSON.stringify(value)}\r\n\r\n`);
}

function openStream(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.write(': connected\n\n');
}

async function take<T>(iterable: AsyncIterable<T>, count: number): Promise<T[]> {
  const items: T[] = [];
  if (count === 0) return items;
  for await (const item of iterable) {
    items.push(item);
    if (items.length === count) break;
  }
  return items;
}

describe('client.subscribe', () => {
  it('yields event frames and skips heartbeats and stream control events', async () => {
    server = await startLocalServer((_request, response) => {
      openStream(response);
      sendFrame(response, frame(1));
      response.write(': heartbeat\n\nevent: replay.complete\ndata: {"sequence":1}\n\n');
      sendFrame(response, frame(2, 'task.completed'));
    });
    const client = createClient({ baseUrl: server.baseUrl, token: 'tok' });
    const items = await take(client.subscribe({ reconnect: false }), 2);
    expect(items.map((item) => [item.type, item.sequence])).toEqual([
      ['task.started', 1],
      ['task.completed', 2],
    ]);
  });

  it('yields stream control events as separate items when asked', async () => {
    server = await startLocalServer((_request, response) => {
      openStream(response);
      sendFrame(response, frame(1));
      response.write('event: replay.complete\ndata: {"sequence":1}\n\n');
    });
    const client = createClient({ baseUrl: server.baseUrl, token: 'tok' });
    const items = await take(client.subscribe({ includeControlEvents: true }), 2);
    expect(isControlEvent(items[0] as EventFrame | StreamControlEvent)).toBe(false);
    expect(items[1]).toEqual({ control: 'replay.complete', data: { sequence: 1 } });
  });

  it('sends the filters, the cursor and the identity headers', async () => {
    server = await startLocalServer((_request, response) => {
      openStream(response);
      sendFrame(response, frame(8));
    });
    const client = createClient({ baseUrl: server.baseUrl, token: 'tok', session: 's1' });
    await take(
      client.subscribe({ run: 'r1', types: ['task.started', 'task.completed'], admin: true, lastEventId: 7 }),
      1,
    );
    expect(server.requests[0]?.url).toBe('/v1/events?admin=1');
    expect(server.requests[0]?.headers).toMatchObject({
      authorization: 'Bearer tok',
      'x-service-session': 's1',
      'x-service-run': 'r1',
      'x-service-event-type': 'task.started,task.completed',
      'last-event-id': '7',
      accept: 'text/event-stream',
    });
  });

  it('decodes a UTF-8 character split across network chunks', async () => {
    const value = { ...frame(1), payload: { text: 'naïve ☃' } };
    const bytes = Buffer.from(`id: 1\ndata: ${JSON.stringify(value)}\n\n`);
    const cut = bytes.indexOf(Buffer.from('☃')) + 1;
    server = await startLocalServer((_request, response) => {
      openStream(response);
      response.write(bytes.subarray(0, cut), () => setImmediate(() => response.write(bytes.subarray(cut))));
    });
    const [item] = await take(createClient({ baseUrl: server.baseUrl }).subscribe(), 1);
    expect(item?.payload).toEqual({ text: 'naïve ☃' });
  });

  it('never yields a frame at or before the cursor it resumed from', async () => {
    server = await startLocalServer((_request, response) => {
      openStream(response);
      for (const sequence of [4, 5, 6]) sendFrame(response, frame(sequence));
    });
    const items = await take(createClient({ baseUrl: server.baseUrl }).subscribe({ lastEventId: 5 }), 1);
    expect(items.map((item) => item.sequence)).toEqual([6]);
  });

  it('resumes with Last-Event-ID after a dropped connection', async () => {
    server = await startLocalServer((_request, response, index) => {
      openStream(response);
      if (index === 0) {
        sendFrame(response, frame(1));
        response.write(`id: 2\ndata: ${JSON.stringify(frame(2))}\n\n`, () => response.destroy());
        return;
      }
      sendFrame(response, frame(2));
      sendFrame(response, frame(3));
    });
    const client = createClient({ baseUrl: server.baseUrl, token: 'tok' });
    const items = await take(client.subscribe({ reconnect: FAST }), 3);
    expect(items.map((item) => item.sequence)).toEqual([1, 2, 3]);
    expect(server.requests[1]?.headers['last-event-id']).toBe('2');
  });

  it('retries a 503 and gives up on a 401 with its ArsError', async () => {
    server = await startLocalServer((request, response, index) => {
      if (index === 0) {
        response.writeHead(503, { 'content-type': 'application/json' });
        response.end('{"code":"unavailable","message":"busy"}');
        return;
      }
      if (request.headers['authorization'] !== 'Bearer good') {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end('{"code":"auth_rejected","message":"bad token"}');
        return;
      }
      openStream(response);
      sendFrame(response, frame(1));
    });
    const good = await take(createClient({ baseUrl: server.baseUrl, token: 'good' }).subscribe({ reconnect: FAST }), 1);
    expect(good[0]?.sequence).toBe(1);
    const error = await take(
      createClient({ baseUrl: server.baseUrl, token: 'bad' }).subscribe({ reconnect: FAST }),
      1,
    ).catch((caught: unknown) => caught);
    expect(isArsError(error) && { status: error.status, code: error.code }).toEqual({
      status: 401,
      code: 'auth_rejected',
    });
  });

  it('gives up after maxAttempts consecutive failures', async () => {
    server = await startLocalServer((_request, response) => {
      response.writeHead(503);
      response.end();
    });
    const iterable = createClient({ baseUrl: server.baseUrl }).subscribe({ reconnect: { ...FAST, maxAttempts: 3 } });
    await expect(take(iterable, 1)).rejects.toMatchObject({ code: 'http_503' });
    expect(server.requests).toHaveLength(3);
  });

  it('ends quietly when its signal aborts while waiting for data', async () => {
    const connected = Promise.withResolvers<void>();
    server = await startLocalServer((_request, response) => {
      openStream(response);
      connected.resolve();
    });
    const controller = new AbortController();
    const iterator = createClient({ baseUrl: server.baseUrl })
      .subscribe({ signal: controller.signal })
      [Symbol.asyncIterator]();
    const pending = iterator.next();
    await connected.promise;
    controller.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it('closes the connection at once when the consumer returns while waiting', async () => {
    const connected = Promise.withResolvers<void>();
    const closed = Promise.withResolvers<void>();
    server = await startLocalServer((_request, response) => {
      openStream(response);
      response.on('close', () => closed.resolve());
      connected.resolve();
    });
    const iterator = createClient({ baseUrl: server.baseUrl }).subscribe()[Symbol.asyncIterator]();
    const pending = iterator.next();
    await connected.promise;
    await iterator.return?.();
    expect(await pending).toMatchObject({ done: true });
    await closed.promise;
  });
});
