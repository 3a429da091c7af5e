import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ARTIFACT_MAX_BYTES } from '../src/config.ts';
import { artifactOf, caller, putBody, startArtifactHarness, uniqueTenant } from './support/harness.ts';
import type { ArtifactHarness } from './support/harness.ts';
import { readFrom, streamInto, sliced, uploadThroughBus } from './support/upload.ts';
import type { Location } from './support/upload.ts';

const MiB = 1024 * 1024;

function checksum(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

async function listed(h: ArtifactHarness, tenant: string): Promise<unknown[]> {
  const me = caller(tenant, 'u', 's');
  return ((await h.call(me, 'artifacts.list', { identity: {} })) as { items: unknown[] }).items;
}

describe('artifact size limit (small ARTIFACT_MAX_BYTES)', () => {
  const MAX = 1000;
  let h: ArtifactHarness;

  beforeAll(async () => {
    h = await startArtifactHarness({ ARTIFACT_MAX_BYTES: String(MAX) });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('stores an inline artifact of exactly ARTIFACT_MAX_BYTES', async () => {
    const tenant = uniqueTenant();
    const bytes = randomBytes(MAX);
    const result = await h.call(caller(tenant, 'u', 's'), 'artifacts.put', {
      identity: {},
      content_base64: bytes.toString('base64'),
      mime_type: 'application/octet-stream',
    });
    expect(artifactOf(result)).toMatchObject({ size_bytes: MAX, checksum: checksum(bytes) });
  });

  it('refuses an inline artifact one byte over with payload_too_large and stores nothing', async () => {
    const tenant = uniqueTenant();
    const before = await h.objectNames();
    const outcome = await h.outcome(caller(tenant, 'u', 's'), 'artifacts.put', {
      identity: {},
      content_base64: randomBytes(MAX + 1).toString('base64'),
      mime_type: 'application/octet-stream',
    });
    expect(outcome).toEqual({
      ok: false,
      code: 'payload_too_large',
      message: `the artifact is ${MAX + 1} bytes; the largest accepted is ${MAX} bytes (ARTIFACT_MAX_BYTES)`,
    });
    expect(await h.objectNames()).toEqual(before);
    expect(await listed(h, tenant)).toEqual([]);
  });

  it('refuses a streamed upload one byte over at finalisation and discards its bytes', async () => {
    const tenant = uniqueTenant();
    const me = caller(tenant, 'u', 's');
    const before = await h.objectNames();
    const begun = (await h.call(me, '_artifact.upload_begin', {})) as { upload_id: string; location: Location };
    await streamInto(h.service.bus, begun.location, sliced(randomBytes(MAX + 1)));
    const outcome = await h.outcome(me, 'artifacts.put', {
      identity: {},
      upload_id: begun.upload_id,
      mime_type: 'application/octet-stream',
    });
    expect(outcome).toMatchObject({
      ok: false,
      code: 'payload_too_large',
      message: expect.stringContaining(`${MAX + 1}`),
    });
    expect(await h.objectNames()).toEqual(before);
    expect(await listed(h, tenant)).toEqual([]);
    await expect(
      h.outcome(me, 'artifacts.put', { identity: {}, upload_id: begun.upload_id, mime_type: 'text/plain' }),
    ).resolves.toMatchObject({ code: 'not_found' });
  });

  it('refuses an announced size over the limit at upload_begin', async () => {
    const me = caller(uniqueTenant(), 'u', 's');
    await expect(h.outcome(me, '_artifact.upload_begin', { size_bytes: MAX + 1 })).resolves.toMatchObject({
      ok: false,
      code: 'payload_too_large',
    });
  });
});

describe('artifact size limit (32 MiB through the streaming upload)', () => {
  const MAX = 32 * MiB;
  let h: ArtifactHarness;

  beforeAll(async () => {
    h = await startArtifactHarness({ ARTIFACT_MAX_BYTES: String(MAX) });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('round-trips a 32 MiB artifact byte for byte', { timeout: 120_000 }, async () => {
    const tenant = uniqueTenant();
    const me = caller(tenant, 'u', 's');
    const original = randomBytes(MAX);
    const { put } = await uploadThroughBus(h, me, original, { name: 'big.bin' });
    const artifact = artifactOf(await put);
    expect(artifact).toMatchObject({ size_bytes: MAX, checksum: checksum(original), name: 'big.bin' });

    const download = (await h.call(me, '_artifact.download_begin', {
      identity: {},
      artifact_id: artifact.artifact_id,
    })) as { artifact: { size_bytes: number }; location: Location };
    expect(download.artifact.size_bytes).toBe(MAX);
    const copy = await readFrom(h.service.bus, download.location);
    expect(copy.length).toBe(MAX);
    expect(Buffer.compare(copy, original)).toBe(0);
  });

  it('tells a caller asking inline for an artifact too large for one reply to use the streaming download', async () => {
    const tenant = uniqueTenant();
    const me = caller(tenant, 'u', 's');
    const { put } = await uploadThroughBus(h, me, randomBytes(2 * MiB));
    const { artifact_id } = artifactOf(await put);
    await expect(h.outcome(me, 'artifacts.get', { identity: {}, artifact_id })).resolves.toMatchObject({
      ok: false,
      code: 'payload_too_large',
      message: expect.stringContaining('streaming download'),
    });
    await expect(
      h.call(me, 'artifacts.get', { identity: {}, artifact_id, include_content: false }),
    ).resolves.toMatchObject({ artifact: { size_bytes: 2 * MiB } });
  });

  it('refuses 32 MiB plus one byte with payload_too_large and stores nothing', { timeout: 120_000 }, async () => {
    const tenant = uniqueTenant();
    const me = caller(tenant, 'u', 's');
    const before = await h.objectNames();
    const begun = (await h.call(me, '_artifact.upload_begin', {})) as { upload_id: string; location: Location };
    await streamInto(h.service.bus, begun.location, sliced(randomBytes(MAX + 1)));
    const outcome = await h.outcome(me, 'artifacts.put', {
      identity: {},
      upload_id: begun.upload_id,
      mime_type: 'application/octet-stream',
    });
    expect(outcome).toEqual({
      ok: false,
      code: 'payload_too_large',
      message: `the artifact is ${MAX + 1} bytes; the largest accepted is ${MAX} bytes (ARTIFACT_MAX_BYTES)`,
    });
    expect(await h.objectNames()).toEqual(before);
    expect(await listed(h, tenant)).toEqual([]);
  });

  it('still takes small artifacts inline', async () => {
    const tenant = uniqueTenant();
    const result = await h.call(caller(tenant, 'u', 's'), 'artifacts.put', putBody({}, 'small'));
    expect(artifactOf(result)).toMatchObject({ size_bytes: 5 });
  });
});

describe('artifact size limit (the default ARTIFACT_MAX_BYTES)', () => {
  let h: ArtifactHarness;

  beforeAll(async () => {
    h = await startArtifactHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('round-trips an artifact of the default maximum, 64 MiB, byte for byte', { timeout: 120_000 }, async () => {
    const me = caller(uniqueTenant(), 'u', 's');
    const original = randomBytes(DEFAULT_ARTIFACT_MAX_BYTES);
    const { put } = await uploadThroughBus(h, me, original);
    const { artifact_id } = artifactOf(await put);
    const download = (await h.call(me, '_artifact.download_begin', { identity: {}, artifact_id })) as {
      location: Location;
    };
    const copy = await readFrom(h.service.bus, download.location);
    expect(Buffer.compare(copy, original)).toBe(0);
  });
});
