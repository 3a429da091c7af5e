import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS_OBJECT_STORE, connectBus, openObjectStore } from '@ars/bus';
import type { Bus } from '@ars/bus';
import { startTestNats } from '@ars/testkit';
import type { TestNats } from '@ars/testkit';
import { routeOf } from './support/bodies.ts';
import { startIntGateway, triple } from './support/int-gateway.ts';
import type { IntGateway } from './support/int-gateway.ts';
import { startServiceProcess } from './support/service-process.ts';
import type { ServiceProcess } from './support/service-process.ts';

const MiB = 1024 * 1024;
/** The artifact limit configured for this suite (ARTIFACT_MAX_BYTES). */
const MAX = 32 * MiB;

let nats: TestNats;
let dataDir: string;
let artifact: ServiceProcess;
let gateway: IntGateway;
let bus: Bus;

async function post(method: string, token: string, body: unknown) {
  const response = await fetch(`${gateway.baseUrl}${routeOf(method)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function putText(bytes: Buffer, name: string): string {
  return `{"identity":{},"mime_type":"application/octet-stream","name":"${name}","content_base64":"${bytes.toString('base64')}"}`;
}

async function objectNames(): Promise<string[]> {
  const store = await openObjectStore(bus, ARTIFACTS_OBJECT_STORE);
  return (await store.list()).map((info) => info.name).sort();
}

function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

beforeAll(async () => {
  nats = await startTestNats();
  dataDir = await mkdtemp(join(tmpdir(), 'ars-artifact-transfer-'));
  artifact = await startServiceProcess('artifact', {
    natsUrl: nats.url,
    dataDir: join(dataDir, 'artifact'),
    env: { ARTIFACT_MAX_BYTES: String(MAX) },
  });
  gateway = await startIntGateway(nats.url);
  bus = await connectBus({ servers: nats.url, name: 'artifact-transfer-int' });
});

afterAll(async () => {
  await gateway?.stop();
  await bus?.close();
  await artifact?.stop();
  await nats?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('large artifacts over HTTP', () => {
  it('round-trips an artifact of ARTIFACT_MAX_BYTES (32 MiB) byte for byte', async () => {
    const token = await gateway.token(triple('big'));
    const bytes = randomBytes(MAX);
    const put = await post('artifacts.put', token, putText(bytes, 'big.bin'));
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const stored = put.body.artifact as { artifact_id: string; size_bytes: number; checksum: string };
    expect(stored).toMatchObject({ size_bytes: MAX, checksum: sha256(bytes), name: 'big.bin' });

    const got = await post('artifacts.get', token, { identity: {}, artifact_id: stored.artifact_id });
    expect(got.status).toBe(200);
    expect(got.body.artifact).toMatchObject({ artifact_id: stored.artifact_id, size_bytes: MAX });
    expect(got.body.protocol_version).toBe('0.1.0');
    const back = Buffer.from(got.body.content_base64 as string, 'base64');
    expect(back.length).toBe(MAX);
    expect(back.equals(bytes)).toBe(true);
  });

  it('refuses ARTIFACT_MAX_BYTES + 1 with 413 and stores nothing', async () => {
    const identity = triple('over');
    const token = await gateway.token(identity);
    const before = await objectNames();
    const put = await post('artifacts.put', token, putText(randomBytes(MAX + 1), 'over.bin'));
    expect(put.status).toBe(413);
    expect(put.body).toEqual({
      code: 'payload_too_large',
      message: `the artifact is ${MAX + 1} bytes; the largest accepted is ${MAX} bytes (ARTIFACT_MAX_BYTES)`,
    });
    expect(await objectNames()).toEqual(before);
    const listed = await post('artifacts.list', token, { identity: {} });
    expect(listed.body.items).toEqual([]);
  });

  it('round-trips a small artifact inline', async () => {
    const token = await gateway.token(triple('small'));
    const bytes = randomBytes(100_000);
    const put = await post('artifacts.put', token, putText(bytes, 'small.bin'));
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const id = (put.body.artifact as { artifact_id: string }).artifact_id;
    const got = await post('artifacts.get', token, { identity: {}, artifact_id: id });
    expect(Buffer.from(got.body.content_base64 as string, 'base64').equals(bytes)).toBe(true);
  });

  it('keeps another user’s large artifact unreadable (404), streamed path included', async () => {
    const owner = triple('owner');
    const token = await gateway.token(owner);
    const put = await post('artifacts.put', token, putText(randomBytes(2 * MiB), 'mine.bin'));
    const id = (put.body.artifact as { artifact_id: string }).artifact_id;
    const stranger = await gateway.token({ ...owner, user: `${owner.user}-other` });
    const got = await post('artifacts.get', stranger, { identity: {}, artifact_id: id });
    expect(got.status).toBe(404);
  });
});

describe('search.query across live and missing owners', () => {
  it('finds the artifact and reports the owners that are not running', async () => {
    const token = await gateway.token(triple('search'));
    await post('artifacts.put', token, putText(Buffer.from('hello'), 'quarterly-report.txt'));
    const found = await post('search.query', token, { identity: {}, query: 'quarterly' });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.items).toEqual([expect.objectContaining({ kind: 'artifact', title: 'quarterly-report.txt' })]);
    expect(found.body.partial).toBe(true);
    expect((found.body.failed_kinds as string[]).sort()).toEqual(['session', 'task']);
    expect(found.body.source_errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'task', code: 'unavailable' })]),
    );
  });
});
