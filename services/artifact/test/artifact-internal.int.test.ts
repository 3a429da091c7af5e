import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '@ars/service-kit/testing';
import { ADMIN, artifactOf, caller, putBody, startArtifactHarness, uniqueTenant } from './support/harness.ts';
import type { ArtifactHarness } from './support/harness.ts';
import { streamInto, sliced } from './support/upload.ts';
import type { Location } from './support/upload.ts';

describe('artifact internal endpoints', () => {
  let h: ArtifactHarness;

  beforeAll(async () => {
    h = await startArtifactHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  describe('_artifact.resolve', () => {
    it('resolves the caller’s artifacts in request order', async () => {
      const tenant = uniqueTenant();
      const me = caller(tenant, 'u', 's1');
      const first = artifactOf(await h.call(me, 'artifacts.put', putBody({}, 'one', { namespace: 'n' })));
      const second = artifactOf(
        await h.call(caller(tenant, 'u', 's2'), 'artifacts.put', putBody({}, 'two!', { source: 'llm' })),
      );
      const resolved = await h.call(me, '_artifact.resolve', {
        tenant,
        user: 'u',
        session: 's1',
        artifact_ids: [second.artifact_id, first.artifact_id],
      });
      expect(resolved).toEqual({
        artifacts: [
          {
            artifact_id: second.artifact_id,
            mime_type: 'text/plain',
            size_bytes: 4,
            namespace: 'default',
            source: 'llm',
          },
          { artifact_id: first.artifact_id, mime_type: 'text/plain', size_bytes: 3, namespace: 'n', source: 'upload' },
        ],
      });
    });

    it('refuses another user’s artifact and a missing one with the same invalid_request', async () => {
      const tenant = uniqueTenant();
      const other = artifactOf(await h.call(caller(tenant, 'other', 's'), 'artifacts.put', putBody({}, 'x')));
      const me = caller(tenant, 'u', 's');
      const foreign = await h.outcome(me, '_artifact.resolve', {
        tenant,
        user: 'u',
        session: 's',
        artifact_ids: [other.artifact_id],
      });
      const missing = await h.outcome(me, '_artifact.resolve', {
        tenant,
        user: 'u',
        session: 's',
        artifact_ids: ['missing'],
      });
      expect(foreign).toEqual({
        ok: false,
        code: 'invalid_request',
        message: `input artifact ${other.artifact_id} does not exist or may not be read`,
      });
      expect(missing).toEqual({
        ok: false,
        code: 'invalid_request',
        message: 'input artifact missing does not exist or may not be read',
      });
    });

    it('refuses an unknown member', async () => {
      const me = caller(uniqueTenant(), 'u', 's');
      await expect(
        h.outcome(me, '_artifact.resolve', { tenant: 't', user: 'u', session: 's', artifact_ids: [], extra: 1 }),
      ).resolves.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('extra') });
    });
  });

  describe('_artifact.erase_session', () => {
    it('deletes the session’s artifacts, bytes and pending uploads, and nothing else', async () => {
      const tenant = uniqueTenant();
      const doomed = caller(tenant, 'u', 'doomed');
      const kept = caller(tenant, 'u', 'kept');
      const before = await h.objectNames();
      const gone = [
        artifactOf(await h.call(doomed, 'artifacts.put', putBody({}, 'a'))).artifact_id,
        artifactOf(await h.call(doomed, 'artifacts.put', putBody({}, 'b'))).artifact_id,
      ];
      const begun = (await h.call(doomed, '_artifact.upload_begin', {})) as { upload_id: string; location: Location };
      await streamInto(h.service.bus, begun.location, sliced(Buffer.from('pending')));
      const survivor = artifactOf(await h.call(kept, 'artifacts.put', putBody({}, 'c'))).artifact_id;

      const erased = await h.call(doomed, '_artifact.erase_session', { tenant, user: 'u', session: 'doomed' });
      expect(erased).toEqual({ artifacts_deleted: 2, uploads_discarded: 1 });

      for (const artifactId of gone) {
        await expect(
          h.outcome(kept, 'artifacts.get', { identity: {}, artifact_id: artifactId }),
        ).resolves.toMatchObject({ code: 'not_found' });
      }
      await expect(h.call(kept, 'artifacts.get', { identity: {}, artifact_id: survivor })).resolves.toBeDefined();
      expect((await h.objectNames()).length).toBe(before.length + 1);
      const listed = (await h.call(kept, 'artifacts.list', { identity: {}, filter: { session: 'doomed' } })) as {
        items: unknown[];
      };
      expect(listed.items).toEqual([]);
      await expect(
        h.outcome(doomed, 'artifacts.put', { identity: {}, upload_id: begun.upload_id, mime_type: 'text/plain' }),
      ).resolves.toMatchObject({ code: 'not_found' });
      expect(await storedEvents(h.service.bus, { tenant, type: 'artifacts.deleted' })).toEqual([]);
    });

    it('is idempotent: a second erasure deletes nothing and succeeds', async () => {
      const tenant = uniqueTenant();
      const me = caller(tenant, 'u', 's');
      await h.call(me, 'artifacts.put', putBody({}, 'a'));
      const triple = { tenant, user: 'u', session: 's' };
      await expect(h.call(me, '_artifact.erase_session', triple)).resolves.toEqual({
        artifacts_deleted: 1,
        uploads_discarded: 0,
      });
      await expect(h.call(me, '_artifact.erase_session', triple)).resolves.toEqual({
        artifacts_deleted: 0,
        uploads_discarded: 0,
      });
    });
  });

  describe('streaming upload and download', () => {
    it('lets only the (tenant, user) that began an upload finalise it', async () => {
      const tenant = uniqueTenant();
      const me = caller(tenant, 'u', 's');
      const begun = (await h.call(me, '_artifact.upload_begin', {})) as { upload_id: string; location: Location };
      await streamInto(h.service.bus, begun.location, sliced(Buffer.from('mine')));
      const body = { identity: {}, upload_id: begun.upload_id, mime_type: 'text/plain' };
      await expect(h.outcome(caller(tenant, 'other', 's'), 'artifacts.put', body)).resolves.toMatchObject({
        code: 'not_found',
      });
      await expect(h.outcome(caller(uniqueTenant(), 'u', 's'), 'artifacts.put', body)).resolves.toMatchObject({
        code: 'not_found',
      });
      await expect(h.call(me, 'artifacts.put', body)).resolves.toMatchObject({ artifact: { size_bytes: 4 } });
    });

    it('lets an admin finalise its own upload into another tenant', async () => {
      const admin = caller(uniqueTenant(), 'root', 's', ADMIN);
      const target = uniqueTenant();
      const begun = (await h.call(admin, '_artifact.upload_begin', {})) as { upload_id: string; location: Location };
      await streamInto(h.service.bus, begun.location, sliced(Buffer.from('cross')));
      const result = await h.call(admin, 'artifacts.put', {
        identity: { tenant: target },
        upload_id: begun.upload_id,
        mime_type: 'text/plain',
      });
      expect(artifactOf(result)).toMatchObject({ tenant: target, user: 'root', size_bytes: 5 });
    });

    it('refuses to finalise an upload whose bytes never arrived', async () => {
      const me = caller(uniqueTenant(), 'u', 's');
      const begun = (await h.call(me, '_artifact.upload_begin', {})) as { upload_id: string };
      await expect(
        h.outcome(me, 'artifacts.put', { identity: {}, upload_id: begun.upload_id, mime_type: 'text/plain' }),
      ).resolves.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('no bytes') });
    });

    it('answers upload_begin with the object store entry, the limit and the expiry', async () => {
      const me = caller(uniqueTenant(), 'u', 's');
      await expect(h.call(me, '_artifact.upload_begin', { size_bytes: 10 })).resolves.toEqual({
        upload_id: expect.any(String),
        location: {
          transport: 'nats_object_store',
          bucket: 'ars_artifacts',
          object_name: expect.stringMatching(/^blobs\//),
        },
        max_bytes: 64 * 1024 * 1024,
        expires_at: expect.stringMatching(/^\d{4}-/),
      });
    });

    it('drops an aborted upload and its bytes, so that it cannot be finalised', async () => {
      const me = caller(uniqueTenant(), 'u', 's');
      const before = await h.objectNames();
      const begun = (await h.call(me, '_artifact.upload_begin', {})) as { upload_id: string; location: Location };
      await streamInto(h.service.bus, begun.location, sliced(Buffer.from('abandoned')));
      await expect(h.call(me, '_artifact.upload_abort', { upload_id: begun.upload_id })).resolves.toEqual({
        upload_id: begun.upload_id,
        discarded: true,
      });
      expect(await h.objectNames()).toEqual(before);
      await expect(
        h.outcome(me, 'artifacts.put', { identity: {}, upload_id: begun.upload_id, mime_type: 'text/plain' }),
      ).resolves.toMatchObject({ code: 'not_found' });
    });

    it('answers discarded false to an abort of a missing, foreign or repeated upload', async () => {
      const tenant = uniqueTenant();
      const me = caller(tenant, 'u', 's');
      const begun = (await h.call(me, '_artifact.upload_begin', {})) as { upload_id: string };
      await expect(
        h.call(caller(tenant, 'other', 's'), '_artifact.upload_abort', { upload_id: begun.upload_id }),
      ).resolves.toMatchObject({ discarded: false });
      await expect(h.call(me, '_artifact.upload_abort', { upload_id: begun.upload_id })).resolves.toMatchObject({
        discarded: true,
      });
      await expect(h.call(me, '_artifact.upload_abort', { upload_id: begun.upload_id })).resolves.toMatchObject({
        discarded: false,
      });
    });

    it('refuses download_begin of another user’s artifact with not_found', async () => {
      const tenant = uniqueTenant();
      const theirs = artifactOf(await h.call(caller(tenant, 'them', 's'), 'artifacts.put', putBody({}, 'x')));
      await expect(
        h.outcome(caller(tenant, 'u', 's'), '_artifact.download_begin', {
          identity: {},
          artifact_id: theirs.artifact_id,
        }),
      ).resolves.toMatchObject({ code: 'not_found' });
    });
  });
});
