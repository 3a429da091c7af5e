import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CODES, isErrorCode } from '@ars/contracts';
import { routeOf } from './support/bodies.ts';
import { BOOTSTRAP_PATH } from '../src/routes/dev.routes.ts';
import { FakeDevIssuer, createHarness } from './support/harness.ts';
import type { Harness } from './support/harness.ts';
import { KeepAliveClient } from './support/keep-alive.ts';
import type { WireResponse } from './support/keep-alive.ts';

// Every error the gateway itself sends, before or outside the registry's
// pipeline (node's HTTP parser, fastify's router and body parsers), is the
// `{code, message}` envelope with a catalogued code (issue 32, item 4).
// Real HTTP with keep-alive against the gateway built on fakes.

const LIST = routeOf('sessions.list');

let h: Harness;
let base: string;
let client: KeepAliveClient;

beforeEach(async () => {
  h = await createHarness({ bodyLimitBytes: 10_000, devIssuer: new FakeDevIssuer() });
  h.rpc.respond = async () => ({ items: [] });
  base = await h.app.listen({ port: 0, host: '127.0.0.1' });
  client = new KeepAliveClient(base);
});

afterEach(async () => {
  client.close();
  await h.close();
});

/** The answer is the envelope, its code catalogued with the answer's status. */
function expectEnvelope(status: number, contentType: string | undefined, text: string, code: string): void {
  expect(contentType ?? '').toMatch(/^application\/json/);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['code', 'message']);
  expect(body.code).toBe(code);
  expect(typeof body.message).toBe('string');
  expect(isErrorCode(body.code)).toBe(true);
  expect(ERROR_CODES[code as keyof typeof ERROR_CODES]).toBe(status);
}

function expectWireEnvelope(response: WireResponse, status: number, code: string): void {
  expect(response.status, response.text).toBe(status);
  expectEnvelope(status, response.headers['content-type'], response.text, code);
}

async function expectNextAnswered(): Promise<void> {
  const next = await client.send({
    path: LIST,
    headers: { authorization: `Bearer ${h.token()}`, 'content-type': 'application/json' },
    chunks: [JSON.stringify({ identity: {} })],
  });
  expect(next.status, next.text).toBe(200);
}

/** Parsed status line, headers and body of a raw HTTP/1.1 answer. */
interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Writes `bytes` on a fresh socket and reads until the server closes it. */
function rawExchange(bytes: string): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const parts: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server neither answered nor closed: ${Buffer.concat(parts).toString()}`));
    }, 3_000);
    socket.on('data', (part: Buffer) => parts.push(part));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(parts).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => {
          const at = line.indexOf(':');
          return [line.slice(0, at).trim().toLowerCase(), line.slice(at + 1).trim()];
        }),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(bytes);
  });
}

describe('errors the gateway sends outside the method pipeline', () => {
  it('answers headers over the limit with 431 headers_too_large in the envelope, and closes', async () => {
    const refused = await client.send({
      method: 'GET',
      path: '/healthz',
      headers: { 'x-filler': 'x'.repeat(20_000) },
    });
    expectWireEnvelope(refused, 431, 'headers_too_large');
    expect(refused.headers.connection).toBe('close');
    await expectNextAnswered();
  });

  it('answers a request line that is not HTTP with 400 invalid_request in the envelope', async () => {
    const answer = await rawExchange('NOT HTTP AT ALL\r\n\r\n');
    expect(answer.status).toBe(400);
    expectEnvelope(400, answer.headers['content-type'], answer.body, 'invalid_request');
  });

  it('answers a header with a space in its name with 400 invalid_request in the envelope', async () => {
    const answer = await rawExchange('GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n');
    expect(answer.status).toBe(400);
    expectEnvelope(400, answer.headers['content-type'], answer.body, 'invalid_request');
  });

  it('answers a malformed chunked body with 400 invalid_request in the envelope', async () => {
    const answer = await rawExchange(
      `POST ${LIST} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Authorization: Bearer ${h.token()}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    );
    expect(answer.status).toBe(400);
    expectEnvelope(400, answer.headers['content-type'], answer.body, 'invalid_request');
  });

  it('answers a path that is not a valid URL with 400 invalid_request in the envelope', async () => {
    const refused = await client.send({ method: 'GET', path: '/v1/control/%zz' });
    expectWireEnvelope(refused, 400, 'invalid_request');
    await expectNextAnswered();
  });

  it('answers a very long method path with 404 unknown_method in the envelope', async () => {
    const refused = await client.send({ method: 'POST', path: `/v1/control/${'a'.repeat(500)}`, chunks: ['{}'] });
    expectWireEnvelope(refused, 404, 'unknown_method');
    await expectNextAnswered();
  });

  it('answers an unknown route with 404 not_found in the envelope', async () => {
    const refused = await client.send({ method: 'GET', path: '/nothing/here' });
    expectWireEnvelope(refused, 404, 'not_found');
    await expectNextAnswered();
  });

  it('answers a body of a media type no route parses with 400 invalid_request in the envelope', async () => {
    const refused = await client.send({
      path: BOOTSTRAP_PATH,
      headers: { 'content-type': 'application/xml' },
      chunks: ['<a/>'],
    });
    expectWireEnvelope(refused, 400, 'invalid_request');
    await expectNextAnswered();
  });

  it('answers a body over the limit with 413 payload_too_large in the envelope', async () => {
    const refused = await client.send({
      path: LIST,
      headers: { authorization: `Bearer ${h.token()}`, 'content-type': 'application/json' },
      chunks: [JSON.stringify({ identity: {}, filler: 'x'.repeat(20_000) })],
    });
    expectWireEnvelope(refused, 413, 'payload_too_large');
    await expectNextAnswered();
  });

  it('answers malformed JSON with 400 invalid_request in the envelope', async () => {
    const refused = await client.send({
      path: LIST,
      headers: { authorization: `Bearer ${h.token()}`, 'content-type': 'application/json' },
      chunks: ['{"identity":'],
    });
    expectWireEnvelope(refused, 400, 'invalid_request');
    await expectNextAnswered();
  });
});
