import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '@ars/contracts';
import { storedEvents } from '@ars/service-kit/testing';
import { ADMIN, NONE, artifactOf, caller, putBody, startArtifactHarness, uniqueTenant } from './support/harness.ts';
import type { ArtifactHarness } from './support/harness.ts';

function sha256(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

describe('artifact methods', () => {
  let h: ArtifactHarness;

  beforeAll(async () => {
    h = await startArtifactHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('stores an artifact with its metadata and publishes artifacts.uploaded with lowercase keys', async () => {
    const tenant = uniqueTenant();
    const alice = caller(tenant, 'alice', 's1');
    const result = await h.call(alice, 'artifacts.put', {
      identity: { tenant, user: 'alice', session: 's1' },
      content_base64: Buffer.from('hello').toString('base64'),
      mime_type: 'text/plain',
      name: 'hello.txt',
      source: 'tool:echo',
      namespace: 'notes',
    });
    const artifact = artifactOf(result);
    expect(result).toMatchObject({ protocol_version: PROTOCOL_VERSION });
    expect(artifact).toEqual({
      artifact_id: expect.any(String),
      mime_type: 'text/plain',
      size_bytes: 5,
      source: 'tool:echo',
      namespace: 'notes',
      tenant,
      user: 'alice',
      session: 's1',
      checksum: sha256('hello'),
      name: 'hello.txt',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const events = await storedEvents(h.service.bus, { tenant, type: 'artifacts.uploaded' });
    expect(events.map((e) => [e.type, e.tenant, e.user, e.session, e.payload])).toEqual([
      [
        'artifacts.uploaded',
        tenant,
        'alice',
        's1',
        {
          artifact_id: artifact.artifact_id,
          mime_type: 'text/plain',
          size_bytes: 5,
          source: 'tool:echo',
          namespace: 'notes',
        },
      ],
    ]);
  });

  it('defaults source to upload and namespace to default', async () => {
    const tenant = uniqueTenant();
    const artifact = artifactOf(await h.call(caller(tenant, 'u', 's'), 'artifacts.put', putBody({}, 'x')));
    expect(artifact).toMatchObject({ source: 'upload', namespace: 'default', tenant, user: 'u', session: 's' });
  });

  it('reads the metadata and the bytes back with artifacts.get', async () => {
    const tenant = uniqueTenant();
    const me = caller(tenant, 'u', 's');
    const { artifact_id } = artifactOf(await h.call(me, 'artifacts.put', putBody({}, 'round trip')));
    const got = (await h.call(me, 'artifacts.get', { identity: {}, artifact_id })) as Record<string, unknown>;
    expect(Buffer.from(got.content_base64 as string, 'base64').toString()).toBe('round trip');
    expect(got).toMatchObject({ artifact: { artifact_id, size_bytes: 10 }, protocol_version: PROTOCOL_VERSION });
  });

  it('reads an artifact from another session of the same user', async () => {
    const tenant = uniqueTenant();
    const { artifact_id } = artifactOf(await h.call(caller(tenant, 'u', 's1'), 'artifacts.put', putBody({}, 'x')));
    await expect(
      h.call(caller(tenant, 'u', 's2'), 'artifacts.get', { identity: {}, artifact_id }),
    ).resolves.toMatchObject({ artifact: { artifact_id, session: 's1' } });
  });

  it('leaves the bytes out when include_content is false', async () => {
    const tenant = uniqueTenant();
    const me = caller(tenant, 'u', 's');
    const { artifact_id } = artifactOf(await h.call(me, 'artifacts.put', putBody({}, 'x')));
    const got = (await h.call(me, 'artifacts.get', { identity: {}, artifact_id, include_content: false })) as object;
    expect(got).not.toHaveProperty('content_base64');
  });

  it('answers not_found for an unknown artifact id', async () => {
    const me = caller(uniqueTenant(), 'u', 's');
    await expect(h.outcome(me, 'artifacts.get', { identity: {}, artifact_id: 'nope' })).resolves.toMatchObject({
      ok: false,
      code: 'not_found',
    });
  });

  it('accepts a matching checksum and refuses a wrong one with nothing stored', async () => {
    const tenant = uniqueTenant();
    const me = caller(tenant, 'u', 's');
    await expect(h.call(me, 'artifacts.put', putBody({}, 'abc', { checksum: sha256('abc') }))).resolves.toBeDefined();
    const before = await h.objectNames();
    const wrong = await h.outcome(me, 'artifacts.put', putBody({}, 'abd', { checksum: sha256('abc') }));
    expect(wrong).toMatchObject({ ok: false, code: 'invalid_request', message: expect.stringContaining('checksum') });
    expect(await h.objectNames()).toEqual(before);
    const listed = (await h.call(me, 'artifacts.list', { identity: {} })) as { items: unknown[] };
    expect(listed.items).toHaveLength(1);
  });

  it('refuses a put with both or neither of content_base64 and upload_id', async () => {
    const me = caller(uniqueTenant(), 'u', 's');
    const neither = await h.outcome(me, 'artifacts.put', { identity: {}, mime_type: 'text/plain' });
    const both = await h.outcome(me, 'artifacts.put', { ...putBody({}, 'x'), upload_id: 'u-1' });
    for (const outcome of [neither, both]) {
      expect(outcome).toMatchObject({
        ok: false,
        code: 'invalid_request',
        message: expect.stringContaining('exactly one'),
      });
    }
  });

  it('answers artifacts.get_ref with 501 presign_unsupported on the object store driver', async () => {
    const me = caller(uniqueTenant(), 'u', 's');
    const { artifact_id } = artifactOf(await h.call(me, 'artifacts.put', putBody({}, 'x')));
    await expect(h.outcome(me, 'artifacts.get_ref', { identity: {}, artifact_id })).resolves.toMatchObject({
      ok: false,
      code: 'presign_unsupported',
    });
  });

  it('answers artifacts.get_ref for a missing artifact with not_found', async () => {
    const me = caller(uniqueTenant(), 'u', 's');
    await expect(h.outcome(me, 'artifacts.get_ref', { identity: {}, artifact_id: 'missing' })).resolves.toMatchObject({
      ok: false,
      code: 'not_found',
    });
  });

  it('deletes metadata and bytes as admin and publishes artifacts.deleted', async () => {
    const tenant = uniqueTenant();
    const owner = caller(tenant, 'owner', 'so');
    const { artifact_id } = artifactOf(await h.call(owner, 'artifacts.put', putBody({}, 'bye')));
    const before = await h.objectNames();
    const admin = caller(tenant, 'root', 'sr', ADMIN);
    await expect(h.call(admin, 'artifacts.delete', { identity: {}, artifact_id })).resolves.toEqual({
      artifact_id,
      deleted: true,
      protocol_version: PROTOCOL_VERSION,
    });
    expect(await h.objectNames()).toHaveLength(before.length - 1);
    await expect(h.outcome(owner, 'artifacts.get', { identity: {}, artifact_id })).resolves.toMatchObject({
      code: 'not_found',
    });
    const events = await storedEvents(h.service.bus, { tenant, type: 'artifacts.deleted' });
    expect(events.map((e) => [e.user, e.session, e.payload])).toEqual([['owner', 'so', { artifact_id }]]);
  });

  it('answers deleted false for an artifact that is not there', async () => {
    const admin = caller(uniqueTenant(), 'root', 's', ADMIN);
    await expect(h.call(admin, 'artifacts.delete', { identity: {}, artifact_id: 'gone' })).resolves.toMatchObject({
      deleted: false,
    });
  });

  it('refuses artifacts.delete without the admin claim', async () => {
    const tenant = uniqueTenant();
    const me = caller(tenant, 'u', 's', NONE);
    const { artifact_id } = artifactOf(await h.call(me, 'artifacts.put', putBody({}, 'x')));
    await expect(h.outcome(me, 'artifacts.delete', { identity: {}, artifact_id })).resolves.toMatchObject({
      ok: false,
      code: 'identity_scope_required',
    });
    await expect(h.call(me, 'artifacts.get', { identity: {}, artifact_id })).resolves.toBeDefined();
  });

  it('pages artifacts.list newest first with a cursor', async () => {
    const tenant = uniqueTenant();
    const me = caller(tenant, 'u', 's');
    const ids: string[] = [];
    for (const text of ['a', 'b', 'c']) {
      ids.push(artifactOf(await h.call(me, 'artifacts.put', putBody({}, text))).artifact_id);
    }
    const first = (await h.call(me, 'artifacts.list', { identity: {}, limit: 2 })) as {
      items: { artifact_id: string }[];
      next_cursor?: string;
    };
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = (await h.call(me, 'artifacts.list', { identity: {}, limit: 2, cursor: first.next_cursor })) as {
      items: { artifact_id: string }[];
      next_cursor?: string;
    };
    expect(second.next_cursor).toBeUndefined();
    const seen = [...first.items, ...second.items].map((a) => a.artifact_id);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen).toHaveLength(3);
  });

  it('narrows artifacts.list by namespace, source and MIME type', async () => {
    const tenant = uniqueTenant();
    const me = caller(tenant, 'u', 's');
    await h.call(me, 'artifacts.put', putBody({}, 'a', { namespace: 'n1', source: 'llm' }));
    await h.call(me, 'artifacts.put', putBody({}, 'b', { namespace: 'n2', mime_type: 'application/json' }));
    const byNamespace = (await h.call(me, 'artifacts.list', { identity: {}, filter: { namespace: 'n1' } })) as {
      items: { namespace: string }[];
    };
    expect(byNamespace.items.map((a) => a.namespace)).toEqual(['n1']);
    const byMime = (await h.call(me, 'artifacts.list', {
      identity: {},
      filter: { mime_type: 'application/json' },
    })) as {
      items: { namespace: string }[];
    };
    expect(byMime.items.map((a) => a.namespace)).toEqual(['n2']);
  });

  it('refuses a malformed cursor with invalid_request', async () => {
    const me = caller(uniqueTenant(), 'u', 's');
    await expect(h.outcome(me, 'artifacts.list', { identity: {}, cursor: 'not-a-cursor' })).resolves.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('finds artifacts by free text with search.artifacts', async () => {
    const tenant = uniqueTenant();
    const me = caller(tenant, 'u', 's');
    const { artifact_id } = artifactOf(
      await h.call(me, 'artifacts.put', putBody({}, 'x', { name: 'Quarterly Report.pdf' })),
    );
    await h.call(me, 'artifacts.put', putBody({}, 'y', { name: 'holiday.png' }));
    const found = (await h.call(me, 'search.artifacts', { identity: {}, query: 'quarterly' })) as {
      items: Record<string, unknown>[];
      protocol_version: string;
    };
    expect(found.protocol_version).toBe(PROTOCOL_VERSION);
    expect(found.items).toEqual([
      expect.objectContaining({
        kind: 'artifact',
        id: artifact_id,
        tenant,
        user: 'u',
        session: 's',
        title: 'Quarterly Report.pdf',
        snippet: 'Quarterly Report.pdf',
        record: expect.objectContaining({ artifact_id }),
      }),
    ]);
  });
});
