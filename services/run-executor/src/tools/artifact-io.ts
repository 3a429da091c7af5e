import { ARTIFACT_DOWNLOAD_BEGIN, ARTIFACT_UPLOAD_BEGIN, ServiceError } from '@ars/contracts';
import type { ArtifactMetadata, BlobLocation, VerifiedIdentity } from '@ars/contracts';
import { callInternal, openObjectStore } from '@ars/bus';
import type { Bus, ObjectStore, RpcClient } from '@ars/bus';
import type { ToolOwner } from './tool.ts';

/**
 * Artifact bytes for the engine (inline dispositions) and the artifact
 * tools, through the artifact service's streaming transfer protocol: the
 * bytes travel through the JetStream object store beside the RPC, never in
 * one bus message.
 *
 * - read: `_artifact.download_begin {identity, artifact_id}` (the owner's
 *   read rule) → stream the object, stopping at `maxBytes`;
 * - write: `_artifact.upload_begin {size_bytes}` → put the bytes into the
 *   named object → `artifacts.put {identity, upload_id, …}` (metadata, and
 *   `artifacts.uploaded`).
 */

/** The first bytes of an artifact. */
export interface ArtifactBytes {
  readonly artifact: ArtifactMetadata;
  readonly bytes: Uint8Array;
  /** True when the artifact is longer than what was read. */
  readonly truncated: boolean;
}

/** A new artifact's content and metadata. */
export interface ArtifactWrite {
  readonly bytes: Uint8Array;
  readonly mimeType: string;
  readonly name?: string | undefined;
  readonly namespace: string;
  readonly source: string;
}

export interface ArtifactIo {
  /** Reads at most `maxBytes` of an artifact the owner may read (else `not_found`). */
  read(owner: ToolOwner, artifactId: string, maxBytes: number): Promise<ArtifactBytes>;
  /** Stores a new artifact under the owner's triple. */
  write(owner: ToolOwner, artifact: ArtifactWrite): Promise<ArtifactMetadata>;
}

/** Options of {@link createArtifactIo}. */
export interface ArtifactIoOptions {
  readonly bus: Bus;
  readonly rpc: RpcClient;
  /** Per RPC, in ms. */
  readonly timeoutMs: number;
}

function identityOf(owner: ToolOwner): VerifiedIdentity {
  return { tenant: owner.tenant, user: owner.user, session: owner.session, scopes: [] };
}

/** The answer's location, if this executor can stream through it (the JetStream object store). */
function locationOf(location: BlobLocation, endpoint: string): BlobLocation {
  if (location.transport !== 'nats_object_store') {
    throw new ServiceError('unimplemented', `${endpoint}: the artifact service offers no object-store transfer`);
  }
  return location;
}

/** Reads a stream until `maxBytes`; cancels the rest. */
async function readBounded(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - size;
      if (value.length > room) {
        chunks.push(value.subarray(0, room));
        size += room;
        truncated = true;
        break;
      }
      chunks.push(value);
      size += value.length;
    }
  } finally {
    if (truncated) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  return { bytes: Buffer.concat(chunks, size), truncated };
}

export function createArtifactIo(options: ArtifactIoOptions): ArtifactIo {
  const { bus, rpc, timeoutMs } = options;
  const stores = new Map<string, Promise<ObjectStore>>();
  const storeOf = (bucket: string): Promise<ObjectStore> => {
    let store = stores.get(bucket);
    if (store === undefined) {
      store = openObjectStore(bus, bucket);
      store.catch(() => stores.delete(bucket));
      stores.set(bucket, store);
    }
    return store;
  };

  return {
    async read(owner, artifactId, maxBytes) {
      const answer = await callInternal(
        rpc,
        ARTIFACT_DOWNLOAD_BEGIN,
        identityOf(owner),
        { identity: { ...owner }, artifact_id: artifactId },
        { timeoutMs },
      );
      const artifact = answer.artifact;
      const location = locationOf(answer.location, ARTIFACT_DOWNLOAD_BEGIN.name);
      const result = await (await storeOf(location.bucket)).get(location.object_name);
      if (result === null) throw new ServiceError('not_found', `artifact ${artifactId} has no bytes`);
      const { bytes, truncated } = await readBounded(result.data, maxBytes);
      return { artifact, bytes, truncated: truncated || artifact.size_bytes > bytes.length };
    },

    async write(owner, artifact) {
      const identity = identityOf(owner);
      const begun = await callInternal(
        rpc,
        ARTIFACT_UPLOAD_BEGIN,
        identity,
        { size_bytes: artifact.bytes.length },
        { timeoutMs },
      );
      const location = locationOf(begun.location, ARTIFACT_UPLOAD_BEGIN.name);
      await (await storeOf(location.bucket)).putBlob({ name: location.object_name }, artifact.bytes);
      const put = (await rpc.call(
        'artifact',
        'artifacts.put',
        identity,
        {
          identity: { ...owner },
          upload_id: begun.upload_id,
          mime_type: artifact.mimeType,
          ...(artifact.name === undefined ? {} : { name: artifact.name }),
          source: artifact.source,
          namespace: artifact.namespace,
        },
        { timeoutMs },
      )) as { artifact: ArtifactMetadata };
      return put.artifact;
    },
  };
}

/** True for MIME types whose bytes are text (shown as UTF-8 rather than base64). */
export function isTextual(mimeType: string): boolean {
  const base = mimeType.split(';')[0]?.trim().toLowerCase() ?? '';
  return (
    base.startsWith('text/') ||
    base.endsWith('+json') ||
    base.endsWith('+xml') ||
    [
      'application/json',
      'application/xml',
      'application/javascript',
      'application/yaml',
      'application/x-yaml',
      'application/csv',
      'application/x-ndjson',
    ].includes(base)
  );
}
