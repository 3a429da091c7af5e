import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '@ars/contracts';
import { routeOf } from './support/bodies.ts';
import { createHarness } from './support/harness.ts';
import type { Harness } from './support/harness.ts';
import { KeepAliveClient, inPieces } from './support/keep-alive.ts';
import type { WireResponse } from './support/keep-alive.ts';
import { MemoryBlobs } from './support/memory-blobs.ts';

// A refused request whose body is still arriving must not wedge its
// keep-alive connection: the gateway drains the body or answers with
// `Connection: close`, and answers at once (issue 32, item 1). Real HTTP on
// loopback against the gateway built on fakes: no nats-server is needed.

const PUT = routeOf('artifacts.put');
const LIST = routeOf('sessions.list');
const BODY_LIMIT = 10_000;
const ARTIFACT_BODY_LIMIT = 4_000_000;

let h: Harness;
let client: KeepAliveClient;

beforeEach(async () => {
  h = await createHarness({
    blobs: new MemoryBlobs(),
    bodyLimitBytes: BODY_LIMIT,
    limits: { inlineArtifactBytes: 1024, artifactBodyLimitBytes: ARTIFACT_BODY_LIMIT },
  });
  h.rpc.respond = async (call) => {
    if (call.method === '_artifact.upload_begin') {
      return {
        upload_id: 'up-1',
        location: { transport: 'nats_object_store', bucket: 'ars_artifacts', object_name: 'blobs/up-1' },
        max_bytes: 10_000_000,
        expires_at: '2999-01-01T00:00:00Z',
      };
    }
    if (call.method === '_artifact.upload_abort') return { upload_id: 'up-1', discarded: true };
    if (call.method === 'artifacts.put')
      return { artifact: { artifact_id: 'a-1' }, protocol_version: PROTOCOL_VERSION };
    return { items: [] };
  };
  const base = await h.app.listen({ port: 0, host: '127.0.0.1' });
  client = new KeepAliveClient(base);
});

afterEach(async () => {
  client.close();
  await h.close();
});

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${h.token()}`, 'content-type': 'application/json', ...extra };
}

/** The call that follows on the same pooled connection: answered normally, at once. */
async function expectNextAnswered(): Promise<void> {
  const next = await client.send({
    path: LIST,
    headers: headers(),
    chunks: [JSON.stringify({ identity: {} })],
  });
  expect(next.status, next.text).toBe(200);
}

/** A refusal is an envelope, and either closes the connection or leaves it usable. */
function expectRefusal(response: WireResponse, status: number, code: string): void {
  expect(response.status, response.text).toBe(status);
  expect(JSON.parse(response.text)).toMatchObject({ code, message: expect.any(String) });
}

const BIG_BASE64 = 'A'.repeat(400_000);

describe('a refused request body still arriving on a kept-alive connection', () => {
  it('answers a malformed artifacts.put body of 400 KB at once and answers the next request', async () => {
    const text = `{"identity":{},"mime_type":"a/b","content_base64":"${BIG_BASE64}", oops}`;
    const refused = await client.send({ path: PUT, headers: headers(), chunks: inPieces(text) });
    expectRefusal(refused, 400, 'invalid_request');
    await expectNextAnswered();
  });

  it('answers an artifacts.put body that goes wrong early while 400 KB more are on the way', async () => {
    const text = `{"identity":{}}}${'x'.repeat(400_000)}`;
    const refused = await client.send({ path: PUT, headers: headers(), chunks: inPieces(text) });
    expectRefusal(refused, 400, 'invalid_request');
    await expectNextAnswered();
  });

  it('answers an artifacts.put whose members besides the content grow over the limit while more arrive', async () => {
    const text = `{"identity":{}${' '.repeat(400_000)}}`;
    const refused = await client.send({ path: PUT, headers: headers(), chunks: inPieces(text) });
    expectRefusal(refused, 413, 'payload_too_large');
    await expectNextAnswered();
  });

  it('answers the JSON body null followed by 400 KB of blanks on artifacts.put', async () => {
    const refused = await client.send({
      path: PUT,
      headers: headers(),
      chunks: inPieces(`null${' '.repeat(400_000)}`),
    });
    expectRefusal(refused, 400, 'invalid_request');
    await expectNextAnswered();
  });

  it('answers the JSON body null sent chunked on artifacts.put', async () => {
    const refused = await client.send({
      path: PUT,
      headers: headers({ 'transfer-encoding': 'chunked' }),
      chunks: ['null'],
    });
    expectRefusal(refused, 400, 'invalid_request');
    await expectNextAnswered();
  });

  it('answers the JSON body null on artifacts.put and answers the next request', async () => {
    const refused = await client.send({ path: PUT, headers: headers(), chunks: ['null'] });
    expectRefusal(refused, 400, 'invalid_request');
    await expectNextAnswered();
  });

  it('answers the JSON body null on any other method and answers the next request', async () => {
    const refused = await client.send({ path: LIST, headers: headers(), chunks: ['null'] });
    expectRefusal(refused, 400, 'invalid_request');
    await expectNextAnswered();
  });

  it('answers an artifacts.put declared over its limit at once and answers the next request', async () => {
    const text = `{"identity":{},"mime_type":"a/b","content_base64":"${'A'.repeat(ARTIFACT_BODY_LIMIT)}"}`;
    const refused = await client.send({ path: PUT, headers: headers(), chunks: inPieces(text, 65_536) });
    expectRefusal(refused, 413, 'payload_too_large');
    await expectNextAnswered();
  });

  it('lets a client still sending a body declared far over the limit read its 413 (a lingering close)', async () => {
    const text = `{"identity":{},"mime_type":"a/b","content_base64":"${'A'.repeat(1_000_000)}`;
    const refused = await client.send({
      path: PUT,
      headers: headers({ 'content-length': String(200_000_000) }),
      chunks: inPieces(text, 65_536),
    });
    expectRefusal(refused, 413, 'payload_too_large');
    expect(refused.headers.connection).toBe('close');
    await expectNextAnswered();
  });

  it('answers an artifacts.put that grows over its limit without a length and answers the next request', async () => {
    const text = `{"identity":{},"mime_type":"a/b","content_base64":"${'A'.repeat(ARTIFACT_BODY_LIMIT)}"}`;
    const refused = await client.send({
      path: PUT,
      headers: headers({ 'transfer-encoding': 'chunked' }),
      chunks: inPieces(text, 65_536),
    });
    expectRefusal(refused, 413, 'payload_too_large');
    await expectNextAnswered();
  });

  it('answers an artifacts.put sent without a JSON content type while its body arrives', async () => {
    const refused = await client.send({
      path: PUT,
      headers: headers({ 'content-type': 'text/plain' }),
      chunks: inPieces(`{"identity":{},"content_base64":"${BIG_BASE64}"}`),
    });
    expectRefusal(refused, 400, 'invalid_request');
    await expectNextAnswered();
  });

  it('answers a body over the limit of any other method at once and answers the next request', async () => {
    const text = JSON.stringify({ identity: {}, filler: 'x'.repeat(400_000) });
    const refused = await client.send({ path: LIST, headers: headers(), chunks: inPieces(text) });
    expectRefusal(refused, 413, 'payload_too_large');
    await expectNextAnswered();
  });

  it('answers malformed JSON of any other method and answers the next request', async () => {
    const refused = await client.send({ path: LIST, headers: headers(), chunks: ['{"identity":{}, oops}'] });
    expectRefusal(refused, 400, 'invalid_request');
    await expectNextAnswered();
  });

  it('answers an unauthenticated request with a large body and answers the next request', async () => {
    const refused = await client.send({
      path: PUT,
      headers: { 'content-type': 'application/json' },
      chunks: inPieces(`{"identity":{},"content_base64":"${BIG_BASE64}"}`),
    });
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text)).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    await expectNextAnswered();
  });

  it('answers an unknown route with a large body and answers the next request', async () => {
    const refused = await client.send({
      path: '/v1/control/no.such.method',
      headers: headers(),
      chunks: inPieces(`{"identity":{},"filler":"${BIG_BASE64}"}`),
    });
    expectRefusal(refused, 404, 'unknown_method');
    await expectNextAnswered();
  });
});
