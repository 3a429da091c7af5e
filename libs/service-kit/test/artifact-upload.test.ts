import { describe, expect, it } from 'vitest';
import type { Bus, ObjectStore, RpcClient } from '@ars/bus';
import { isServiceError, PROTOCOL_VERSION } from '@ars/contracts';
import { createArtifactUploader } from '../src/artifact-upload.ts';
import type { ObjectStores } from '../src/artifact-upload.ts';

const OWNER = { tenant: 't1', user: 'u1', session: 's1' };
const CONTENT = {
  bytes: new Uint8Array([1, 2, 3]),
  mimeType: 'text/plain',
  name: 'a.txt',
  namespace: 'n',
  source: 'x',
};
const METADATA = {
  artifact_id: 'art-1',
  mime_type: 'text/plain',
  size_bytes: 3,
  source: 'x',
  namespace: 'n',
  ...OWNER,
  checksum: 'sha256:00',
  created_at: '2026-01-01T00:00:00Z',
};

interface Seen {
  readonly calls: { method: string; body: Record<string, unknown> }[];
  readonly puts: { bucket: string; name: string; size: number }[];
}

/** An artifact service stand-in answering `put` to artifacts.put, and object stores that record each put. */
function fakes(put: unknown, transport = 'nats_object_store'): { rpc: RpcClient; stores: ObjectStores; seen: Seen } {
  const seen: Seen = { calls: [], puts: [] };
  const rpc: RpcClient = {
    async call(_service, method, _identity, body) {
      seen.calls.push({ method, body: body as Record<string, unknown> });
      if (method !== '_artifact.upload_begin') return put;
      return {
        upload_id: 'up-1',
        location: { transport, bucket: 'ars_artifacts', object_name: 'obj-1' },
        max_bytes: 1_000,
        expires_at: '2026-01-01T01:00:00Z',
      };
    },
  };
  const stores: ObjectStores = async (bucket) =>
    ({
      putBlob: async (meta: { name: string }, bytes: Uint8Array) => {
        seen.puts.push({ bucket, name: meta.name, size: bytes.length });
      },
    }) as unknown as ObjectStore;
  return { rpc, stores, seen };
}

const uploaderOf = (f: ReturnType<typeof fakes>) =>
  createArtifactUploader({ bus: {} as Bus, rpc: f.rpc, stores: f.stores, timeoutMs: 1_000 });

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isServiceError(error)) return error.code;
    throw error;
  }
  throw new Error('not refused');
}

describe('createArtifactUploader', () => {
  it('begins the upload, puts the bytes into the named object, then puts the metadata with the upload id', async () => {
    const f = fakes({ artifact: METADATA, protocol_version: PROTOCOL_VERSION });
    const artifact = await uploaderOf(f).upload(OWNER, CONTENT);
    expect(artifact).toEqual(METADATA);
    expect(f.seen.calls.map((c) => c.method)).toEqual(['_artifact.upload_begin', 'artifacts.put']);
    expect(f.seen.calls[0]?.body).toEqual({ size_bytes: 3 });
    expect(f.seen.puts).toEqual([{ bucket: 'ars_artifacts', name: 'obj-1', size: 3 }]);
    expect(f.seen.calls[1]?.body).toEqual({
      identity: OWNER,
      upload_id: 'up-1',
      mime_type: 'text/plain',
      name: 'a.txt',
      source: 'x',
      namespace: 'n',
    });
  });

  it('refuses an artifacts.put reply that is not its response internal', async () => {
    const f = fakes({ artifact: { artifact_id: 'art-1' }, protocol_version: PROTOCOL_VERSION });
    expect(await refusal(uploaderOf(f).upload(OWNER, CONTENT))).toBe('internal');
  });

  it('refuses a location other than the object store unimplemented, before any byte is put', async () => {
    const f = fakes({ artifact: METADATA, protocol_version: PROTOCOL_VERSION }, 'http_presigned');
    expect(await refusal(uploaderOf(f).upload(OWNER, CONTENT))).toBe('unimplemented');
    expect(f.seen.puts).toEqual([]);
  });
});
