import { ARTIFACT_DOWNLOAD_BEGIN, ServiceError } from '@ars/contracts';
import type { ArtifactMetadata, VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { Bus, RpcClient } from '@ars/bus';
import { createArtifactUploader, createObjectStores, objectStoreLocation } from '@ars/service-kit';
import type { NewArtifact } from '@ars/service-kit';
import type { ToolOwner } from './tool.ts';

/**
 * Artifact bytes for the engine (inline dispositions) and the artifact
 * tools, through the artifact service's streaming transfer protocol: the
 * bytes travel through the JetStream object store beside the RPC, never in
 * one bus message.
 *
 * - read: `_artifact.download_begin {identity, artifact_id}` (the owner's
 *   read rule) → stream the object, stopping at `maxBytes`;
 * - write: `@ars/service-kit`'s artifact uploader (`_artifact.upload_begin`
 *   → the object → `artifacts.put`).
 */

/** The first bytes of an artifact. */
export interface ArtifactBytes {
  readonly artifact: ArtifactMetadata;
  readonly bytes: Uint8Array;
  /** True when the artifact is longer than what was read. */
  readonly truncated: boolean;
}

/** A new artifact's content and metadata. */
export type ArtifactWrite = NewArtifact;

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
  const storeOf = createObjectStores(bus);
  const uploader = createArtifactUploader({ bus, rpc, timeoutMs, stores: storeOf });

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
      const location = objectStoreLocation(answer.location, ARTIFACT_DOWNLOAD_BEGIN.name);
      const result = await (await storeOf(location.bucket)).get(location.object_name);
      if (result === null) throw new ServiceError('not_found', `artifact ${artifactId} has no bytes`);
      const { bytes, truncated } = await readBounded(result.data, maxBytes);
      return { artifact, bytes, truncated: truncated || artifact.size_bytes > bytes.length };
    },

    write: (owner, artifact) => uploader.upload(owner, artifact),
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
