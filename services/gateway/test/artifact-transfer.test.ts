import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, ServiceError } from '@ars/contracts';
import { routeOf } from './support/bodies.ts';
import { createLogger } from '@ars/telemetry';
import { readPutBody } from '../src/artifacts/artifact-upload.ts';
import { createHarness, FakeRpc, scoped } from './support/harness.ts';
import type { Harness, RecordedCall } from './support/harness.ts';
import { MemoryBlobs } from './support/memory-blobs.ts';

const PUT = routeOf('artifacts.put');
const GET = routeOf('artifacts.get');
const INLINE = 1024;
const MAX = 20_000;
const LOCATION = { transport: 'nats_object_store', bucket: 'ars_artifacts', object_name: 'blobs/up-1' };
/** An artifact's metadata as the artifact service answers it. */
function metadata(size: number, extra: Record<string, unknown> = {}) {
  return {
    artifact_id: 'a-1',
    mime_type: 'a/b',
    size_bytes: size,
    source: 'upload',
    namespace: 'default',
    tenant: 't1',
    user: 'u1',
    session: 's1',
    checksum: 'sha256:00',
    created_at: '2030-01-01T00:00:00Z',
    ...extra,
  };
}

let h: Harness;
let blobs: MemoryBlobs;
/** What the fake artifact service answers artifacts.put with, by default an artifact. */
let putAnswer: (call: RecordedCall) => Promise<unknown>;

function methods(): string[] {
  return h.rpc.calls.map((call) => call.method);
}

function callOf(method: string): RecordedCall | undefined {
  return h.rpc.calls.find((call) => call.method === method);
}

function putText(text: string) {
  return h.send('POST', PUT, undefined, { raw: text });
}

function putBody(bytes: Buffer, extra: Record<string, unknown> = {}) {
  return putText(
    JSON.stringify({
      identity: {},
      mime_type: 'application/octet-stream',
      ...extra,
      content_base64: bytes.toString('base64'),
    }),
  );
}

async function start(options: { blobs?: boolean; limits?: Record<string, number> } = {}) {
  blobs = new MemoryBlobs();
  h = await createHarness({
    ...(options.blobs === false ? {} : { blobs }),
    bodyLimitBytes: 10_000,
    limits: { inlineArtifactBytes: INLINE, artifactBodyLimitBytes: 200_000, ...options.limits },
  });
  putAnswer = async () => ({ artifact: { artifact_id: 'a-1' }, protocol_version: PROTOCOL_VERSION });
  h.rpc.respond = async (call) => {
    switch (call.method) {
      case '_artifact.upload_begin':
        return { upload_id: 'up-1', location: LOCATION, max_bytes: MAX, expires_at: '2999-01-01T00:00:00Z' };
      case '_artifact.upload_abort':
        return { upload_id: 'up-1', discarded: true };
      case 'artifacts.put':
        return putAnswer(call);
      default:
        return { items: [] };
    }
  };
}

afterEach(async () => {
  await h.close();
});

describe('artifacts.put over HTTP', () => {
  beforeEach(() => start());

  it('forwards an artifact that fits one bus message inline, byte for byte', async () => {
    const bytes = randomBytes(INLINE);
    const response = await putBody(bytes, { name: 'small.bin' });
    expect(response.statusCode, response.body).toBe(200);
    expect(methods()).toEqual(['artifacts.put']);
    expect(callOf('artifacts.put')?.body).toEqual({
      identity: { tenant: 't1', user: 'u1', session: 's1' },
      mime_type: 'application/octet-stream',
      name: 'small.bin',
      content_base64: bytes.toString('base64'),
    });
    expect(response.json()).toMatchObject({ artifact: { artifact_id: 'a-1' }, protocol_version: PROTOCOL_VERSION });
  });

  it('streams a larger artifact through an upload and names it by upload_id', async () => {
    const bytes = randomBytes(15_000);
    const response = await putBody(bytes, { name: 'big.bin' });
    expect(response.statusCode, response.body).toBe(200);
    expect(methods()).toEqual(['_artifact.upload_begin', 'artifacts.put']);
    expect(callOf('_artifact.upload_begin')?.body).toEqual({});
    expect(blobs.objects.get(LOCATION.object_name)).toEqual(bytes);
    expect(callOf('artifacts.put')?.body).toEqual({
      identity: { tenant: 't1', user: 'u1', session: 's1' },
      mime_type: 'application/octet-stream',
      name: 'big.bin',
      upload_id: 'up-1',
    });
  });

  it('streams whatever the order of the members', async () => {
    const bytes = randomBytes(5_000);
    const text = `{"content_base64":"${bytes.toString('base64')}","mime_type":"image/png","identity":{}}`;
    const response = await putText(text);
    expect(response.statusCode, response.body).toBe(200);
    expect(blobs.objects.get(LOCATION.object_name)).toEqual(bytes);
    expect(callOf('artifacts.put')?.body).toMatchObject({ mime_type: 'image/png', upload_id: 'up-1' });
  });

  it('refuses an artifact over the limit with 413, stores nothing and drops the upload', async () => {
    const response = await putBody(randomBytes(MAX + 1));
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({
      code: 'payload_too_large',
      message: `the artifact is ${MAX + 1} bytes; the largest accepted is ${MAX} bytes (ARTIFACT_MAX_BYTES)`,
    });
    expect(blobs.objects.size).toBe(0);
    expect(blobs.failedPuts).toBe(1);
    expect(methods()).toEqual(['_artifact.upload_begin', '_artifact.upload_abort']);
    expect(callOf('_artifact.upload_abort')?.body).toEqual({ upload_id: 'up-1' });
  });

  it('refuses a tenant crossing without admin before anything is streamed', async () => {
    const response = await putBody(randomBytes(5_000), { identity: { tenant: 't2' } });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ code: 'scope_mismatch' });
    expect(methods()).toEqual([]);
  });

  it('lets an admin cross tenants with a streamed artifact', async () => {
    const text = JSON.stringify({
      identity: { tenant: 't2' },
      mime_type: 'a/b',
      content_base64: randomBytes(5_000).toString('base64'),
    });
    const response = await h.send('POST', PUT, undefined, { raw: text, token: h.token(scoped('admin')) });
    expect(response.statusCode, response.body).toBe(200);
    expect(callOf('artifacts.put')?.body).toMatchObject({ identity: { tenant: 't2' }, upload_id: 'up-1' });
  });

  it('drops the upload when the body fails its schema after the bytes (400)', async () => {
    const bytes = randomBytes(5_000);
    const response = await putText(`{"identity":{},"content_base64":"${bytes.toString('base64')}"}`);
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain('mime_type');
    expect(methods()).toEqual(['_artifact.upload_begin', '_artifact.upload_abort']);
  });

  it('drops the upload when the owner refuses the put (a 4xx), not when it is unavailable', async () => {
    putAnswer = async () => {
      throw new ServiceError('invalid_request', 'checksum: the bytes hash to x, not y');
    };
    expect((await putBody(randomBytes(5_000))).statusCode).toBe(400);
    expect(methods()).toContain('_artifact.upload_abort');
    h.rpc.calls.length = 0;
    putAnswer = async () => {
      throw new ServiceError('timeout', 'no answer');
    };
    expect((await putBody(randomBytes(5_000))).statusCode).toBe(504);
    expect(methods()).not.toContain('_artifact.upload_abort');
  });

  it('refuses content_base64 together with upload_id', async () => {
    const response = await putBody(randomBytes(10), { upload_id: 'mine' });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain('exactly one');
  });

  it('forwards a body naming an upload_id alone as it is', async () => {
    const response = await putText('{"identity":{},"mime_type":"a/b","upload_id":"u-9"}');
    expect(response.statusCode, response.body).toBe(200);
    expect(callOf('artifacts.put')?.body).toMatchObject({ upload_id: 'u-9' });
  });

  it('accepts artifacts.put bodies past the small limit that every other method keeps', async () => {
    const big = randomBytes(9_000);
    expect((await putBody(big)).statusCode).toBe(200);
    const other = await h.post(routeOf('tasks.list'), { identity: {}, padding: 'x'.repeat(12_000) });
    expect(other.statusCode).toBe(413);
  });

  it('refuses an artifacts.put body past ARS_ARTIFACT_BODY_LIMIT_BYTES with 413', async () => {
    const response = await putBody(randomBytes(160_000));
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ code: 'payload_too_large' });
    expect(blobs.objects.size).toBe(0);
  });

  it('refuses a body that is not JSON with 400', async () => {
    const response = await h.send('POST', PUT, undefined, {
      raw: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    expect(response.statusCode).toBe(400);
    expect(methods()).toEqual([]);
  });

  it('still authenticates first: no token, 401 and nothing read', async () => {
    const response = await h.send('POST', PUT, undefined, { raw: '{}', token: null });
    expect(response.statusCode).toBe(401);
  });
});

describe('artifacts.put without an object store', () => {
  beforeEach(() => start({ blobs: false }));

  it('refuses bytes beyond one bus message with 413', async () => {
    const response = await putBody(randomBytes(5_000));
    expect(response.statusCode).toBe(413);
    expect(methods()).toEqual([]);
  });
});

describe('artifacts.get over HTTP', () => {
  beforeEach(() => start());

  it('passes an answer that fits one bus message through', async () => {
    putAnswer = async () => ({});
    h.rpc.respond = async () => ({ artifact: { artifact_id: 'a-1' }, content_base64: 'QUJD' });
    const response = await h.post(GET, { identity: {}, artifact_id: 'a-1' });
    expect(response.json()).toMatchObject({ content_base64: 'QUJD', protocol_version: PROTOCOL_VERSION });
    expect(methods()).toEqual(['artifacts.get']);
  });

  it('streams a large artifact from the object store as the same JSON', async () => {
    const bytes = randomBytes(50_001);
    blobs.objects.set(LOCATION.object_name, bytes);
    const artifact = metadata(bytes.length);
    h.rpc.respond = async (call) => {
      if (call.method === 'artifacts.get') throw new ServiceError('payload_too_large', 'too large for one reply');
      return { artifact, location: LOCATION };
    };
    const response = await h.post(GET, { identity: {}, artifact_id: 'a-1' });
    expect(response.statusCode).toBe(200);
    expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.body));
    expect(response.json()).toEqual({
      artifact,
      content_base64: bytes.toString('base64'),
      protocol_version: PROTOCOL_VERSION,
    });
    expect(h.rpc.calls.map((call) => [call.method, call.body])).toEqual([
      ['artifacts.get', { identity: { tenant: 't1', user: 'u1', session: 's1' }, artifact_id: 'a-1' }],
      ['_artifact.download_begin', { identity: { tenant: 't1', user: 'u1', session: 's1' }, artifact_id: 'a-1' }],
    ]);
  });

  it('answers 404 when the bytes are gone from the object store', async () => {
    h.rpc.respond = async (call) => {
      if (call.method === 'artifacts.get') throw new ServiceError('payload_too_large', 'too large');
      return { artifact: metadata(10), location: LOCATION };
    };
    const response = await h.post(GET, { identity: {}, artifact_id: 'a-1' });
    expect(response.statusCode).toBe(404);
  });

  it('passes the refusal of a metadata-only read through', async () => {
    h.rpc.respond = async () => {
      throw new ServiceError('payload_too_large', 'odd');
    };
    const response = await h.post(GET, { identity: {}, artifact_id: 'a-1', include_content: false });
    expect(response.statusCode).toBe(413);
    expect(methods()).toEqual(['artifacts.get']);
  });
});

describe('readPutBody, fed piece by piece', () => {
  const verified = { tenant: 't1', user: 'u1', session: 's1', scopes: [] };
  let rpc: FakeRpc;
  let store: MemoryBlobs;

  function read(text: string, pieceChars: number) {
    const pieces: Buffer[] = [];
    for (let i = 0; i < text.length; i += pieceChars) pieces.push(Buffer.from(text.slice(i, i + pieceChars)));
    return readPutBody(
      {
        rpc,
        blobs: store,
        inlineBytes: INLINE,
        bodyLimitBytes: 1_000_000,
        restLimit: 10_000,
        logger: createLogger({ name: 'read-put-body-test', level: 'silent' }),
      },
      {
        raw: (async function* () {
          yield* pieces;
        })(),
        verified,
        preflight: () => undefined,
      },
    );
  }

  beforeEach(() => {
    rpc = new FakeRpc();
    store = new MemoryBlobs();
    rpc.respond = async (call) =>
      call.method === '_artifact.upload_begin'
        ? { upload_id: 'up-1', location: LOCATION, max_bytes: MAX, expires_at: '2999-01-01T00:00:00Z' }
        : { upload_id: 'up-1', discarded: true };
  });

  it('writes each decoded piece into the object store as it comes, holding no more than one piece', async () => {
    const bytes = randomBytes(19_000);
    const text = JSON.stringify({ identity: {}, mime_type: 'a/b', content_base64: bytes.toString('base64') });
    const { body, uploadId } = await read(text, 4_000);
    expect(uploadId).toBe('up-1');
    expect(body).toEqual({ identity: {}, mime_type: 'a/b', upload_id: 'up-1' });
    expect(store.objects.get(LOCATION.object_name)).toEqual(bytes);
    expect(store.largestPiece).toBeLessThanOrEqual(3_000);
  });

  it('splits multi-byte characters of the other members across pieces correctly', async () => {
    const text = JSON.stringify({ identity: {}, mime_type: 'a/b', name: 'été ☃ 日本', content_base64: 'QUJD' });
    const { body } = await read(text, 1);
    expect(body).toMatchObject({ name: 'été ☃ 日本', content_base64: 'QUJD' });
  });

  it('drops the stored piece and the upload when the base64 turns out invalid mid-stream', async () => {
    const text = `{"identity":{},"mime_type":"a/b","content_base64":"${randomBytes(3_000).toString('base64')}#"}`;
    await expect(read(text, 1_000)).rejects.toMatchObject({ code: 'invalid_request' });
    expect(store.objects.size).toBe(0);
    expect(store.failedPuts).toBe(1);
    expect(rpc.calls.map((call) => call.method)).toEqual(['_artifact.upload_begin', '_artifact.upload_abort']);
  });

  it('reads the whole body past the limit to name the artifact size in the refusal', async () => {
    const text = JSON.stringify({
      identity: {},
      mime_type: 'a/b',
      content_base64: randomBytes(MAX + 5_000).toString('base64'),
    });
    await expect(read(text, 2_000)).rejects.toMatchObject({
      code: 'payload_too_large',
      message: expect.stringContaining(`${MAX + 5_000} bytes`),
    });
    expect(store.objects.size).toBe(0);
  });
});
