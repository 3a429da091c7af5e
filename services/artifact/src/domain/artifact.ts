import type { ArtifactMetadata } from '@ars/contracts';

/** The owner triple every artifact is stored under. */
export interface Owner {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/** One artifact as stored: its metadata plus where its bytes live. */
export interface ArtifactRecord {
  /** = artifact_id. */
  _id: string;
  artifact_id: string;
  tenant: string;
  user: string;
  session: string;
  mime_type: string;
  size_bytes: number;
  source: string;
  namespace: string;
  name?: string;
  /** `sha256:<lowercase hex>`. */
  checksum: string;
  /** RFC 3339, UTC. */
  created_at: string;
  /** The blob driver key of the bytes. */
  blob_key: string;
}

/** The wire metadata of a record (never the blob key). */
export function toMetadata(record: ArtifactRecord): ArtifactMetadata {
  return {
    artifact_id: record.artifact_id,
    mime_type: record.mime_type,
    size_bytes: record.size_bytes,
    source: record.source,
    namespace: record.namespace,
    tenant: record.tenant,
    user: record.user,
    session: record.session,
    checksum: record.checksum,
    ...(record.name === undefined ? {} : { name: record.name }),
    created_at: record.created_at,
  };
}

/** `sha256:<hex>` from a lowercase hex digest. */
export function checksumOf(sha256Hex: string): string {
  return `sha256:${sha256Hex}`;
}

/** True when `owner` owns `record` (same tenant and user; any of the user's sessions). */
export function isOwnedBy(record: Pick<ArtifactRecord, 'tenant' | 'user'>, owner: Pick<Owner, 'tenant' | 'user'>) {
  return record.tenant === owner.tenant && record.user === owner.user;
}
