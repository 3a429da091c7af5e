import { ARTIFACT_UPLOAD_BEGIN, ArtifactsPutResponse, ServiceError } from '@ars/contracts';
import type { ArtifactMetadata, BlobLocation, VerifiedIdentity } from '@ars/contracts';
import { callInternal, openObjectStore } from '@ars/bus';
import type { Bus, ObjectStore, RpcClient } from '@ars/bus';

/**
 * Stores bytes as an artifact of a session through the artifact service's
 * streaming protocol: `_artifact.upload_begin {size_bytes}` → the bytes into
 * the JetStream object store entry it names → `artifacts.put {identity,
 * upload_id, …}` (metadata, and `artifacts.uploaded`). The bytes never
 * travel in a bus message. Used by every service that writes artifacts
 * (run-executor's artifact tools, agent-registry's offloaded MCP results).
 */

/** Whose session an artifact belongs to. */
export interface ArtifactOwner {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/** A new artifact's bytes and metadata. */
export interface NewArtifact {
  readonly bytes: Uint8Array;
  readonly mimeType: string;
  readonly name?: string | undefined;
  /** `namespace` of the metadata, e.g. `mcp_offload`. */
  readonly namespace: string;
  /** `source` of the metadata, e.g. `mcp:<server_id>`. */
  readonly source: string;
}

/** Opens a JetStream object store bucket, once per bucket. */
export type ObjectStores = (bucket: string) => Promise<ObjectStore>;

/**
 * The object stores of `bus`, each opened on first use and kept; one that
 * failed to open is opened again on the next use.
 */
export function createObjectStores(bus: Bus): ObjectStores {
  const stores = new Map<string, Promise<ObjectStore>>();
  return (bucket) => {
    let store = stores.get(bucket);
    if (store === undefined) {
      store = openObjectStore(bus, bucket);
      store.catch(() => stores.delete(bucket));
      stores.set(bucket, store);
    }
    return store;
  };
}

/**
 * `location` when this process can stream through it (the JetStream object
 * store); else 501 `unimplemented`, naming `endpoint` (the artifact method that answered it).
 */
export function objectStoreLocation(location: BlobLocation, endpoint: string): BlobLocation {
  if (location.transport !== 'nats_object_store') {
    throw new ServiceError('unimplemented', `${endpoint}: the artifact service offers no object-store transfer`);
  }
  return location;
}

/** Options of {@link createArtifactUploader}. */
export interface ArtifactUploaderOptions {
  readonly bus: Bus;
  readonly rpc: RpcClient;
  /** Bounds each of the two RPCs, in ms. */
  readonly timeoutMs: number;
  /** Shares the opened buckets with the caller's reads. @default a cache of its own over `bus` */
  readonly stores?: ObjectStores;
}

/** Writes artifacts. */
export interface ArtifactUploader {
  /**
   * Stores `artifact` under the owner's triple (the owner is the caller
   * identity of both RPCs); the artifact service's refusals are thrown as
   * they come, a reply that is not `artifacts.put`'s response as `internal`.
   */
  upload(owner: ArtifactOwner, artifact: NewArtifact): Promise<ArtifactMetadata>;
}

export function createArtifactUploader(options: ArtifactUploaderOptions): ArtifactUploader {
  const { rpc, timeoutMs } = options;
  const storeOf = options.stores ?? createObjectStores(options.bus);
  return {
    async upload(owner, artifact) {
      const identity: VerifiedIdentity = { tenant: owner.tenant, user: owner.user, session: owner.session, scopes: [] };
      const begun = await callInternal(
        rpc,
        ARTIFACT_UPLOAD_BEGIN,
        identity,
        { size_bytes: artifact.bytes.length },
        { timeoutMs },
      );
      const location = objectStoreLocation(begun.location, ARTIFACT_UPLOAD_BEGIN.name);
      await (await storeOf(location.bucket)).putBlob({ name: location.object_name }, artifact.bytes);
      const reply = await rpc.call(
        'artifact',
        'artifacts.put',
        identity,
        {
          identity: { tenant: owner.tenant, user: owner.user, session: owner.session },
          upload_id: begun.upload_id,
          mime_type: artifact.mimeType,
          ...(artifact.name === undefined ? {} : { name: artifact.name }),
          source: artifact.source,
          namespace: artifact.namespace,
        },
        { timeoutMs },
      );
      const put = ArtifactsPutResponse.safeParse(reply);
      if (!put.success) {
        throw new ServiceError('internal', 'artifacts.put answered a reply that is not its response', {
          cause: put.error,
        });
      }
      return put.data.artifact;
    },
  };
}
