import { ARTIFACT_UPLOAD_BEGIN, ServiceError } from '@ars/contracts';
import type { ArtifactMetadata, VerifiedIdentity } from '@ars/contracts';
import { callInternal, openObjectStore } from '@ars/bus';
import type { Bus, ObjectStore, RpcClient } from '@ars/bus';

/**
 * Stores bytes as an artifact of a session through the artifact service's
 * streaming protocol, as run-executor's artifact tools do: `_artifact.upload_begin`
 * → the bytes into the named JetStream object store entry → `artifacts.put`
 * with the `upload_id` (metadata, `artifacts.uploaded`). The bytes never
 * travel in a bus message.
 */

/** Whose session the artifact belongs to. */
export interface ArtifactOwner {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/** A new artifact. */
export interface ArtifactContent {
  readonly bytes: Uint8Array;
  readonly mimeType: string;
  readonly name?: string | undefined;
  /** `source` of the metadata, e.g. `mcp:<server_id>`. */
  readonly source: string;
  readonly namespace: string;
}

export interface ArtifactWriter {
  /** Stores `content` under the owner's triple; the artifact service's refusals are thrown as they come. */
  write(owner: ArtifactOwner, content: ArtifactContent): Promise<ArtifactMetadata>;
}

/** Options of {@link createArtifactWriter}. */
export interface ArtifactWriterOptions {
  readonly bus: Bus;
  readonly rpc: RpcClient;
  /** Per RPC, in ms. */
  readonly timeoutMs: number;
}

/** The artifact namespace offloaded MCP results are stored in. */
export const OFFLOAD_NAMESPACE = 'mcp_offload';

export function createArtifactWriter(options: ArtifactWriterOptions): ArtifactWriter {
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
    async write(owner, content) {
      const identity: VerifiedIdentity = { ...owner, scopes: [] };
      const begun = await callInternal(
        rpc,
        ARTIFACT_UPLOAD_BEGIN,
        identity,
        { size_bytes: content.bytes.length },
        { timeoutMs },
      );
      if (begun.location.transport !== 'nats_object_store') {
        throw new ServiceError('unavailable', 'the artifact service offers no object-store upload');
      }
      const store = await storeOf(begun.location.bucket);
      await store.putBlob({ name: begun.location.object_name }, content.bytes);
      const put = (await rpc.call(
        'artifact',
        'artifacts.put',
        identity,
        {
          identity: { ...owner },
          upload_id: begun.upload_id,
          mime_type: content.mimeType,
          ...(content.name === undefined ? {} : { name: content.name }),
          source: content.source,
          namespace: content.namespace,
        },
        { timeoutMs },
      )) as { artifact: ArtifactMetadata };
      return put.artifact;
    },
  };
}
