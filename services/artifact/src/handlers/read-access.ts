import { ServiceError } from '@ars/contracts';
import { isOwnedBy } from '../domain/artifact.ts';
import type { ArtifactRecord, Owner } from '../domain/artifact.ts';
import type { ArtifactDeps } from './deps.ts';

/**
 * The artifact `artifactId` if `reader` may read it: artifacts are readable by
 * their owner's (tenant, user) from any of that user's sessions. A missing
 * and a foreign artifact are the same `not_found`.
 */
export async function readableArtifact(
  deps: ArtifactDeps,
  reader: Pick<Owner, 'tenant' | 'user'>,
  artifactId: string,
): Promise<ArtifactRecord> {
  const record = await deps.artifacts.findById(artifactId);
  if (record === null || !isOwnedBy(record, reader)) {
    throw new ServiceError('not_found', `artifact ${artifactId} not found`);
  }
  return record;
}

/** The artifact's bytes as a stream; their absence behind existing metadata is an internal fault. */
export async function openBytes(deps: ArtifactDeps, record: ArtifactRecord): Promise<ReadableStream<Uint8Array>> {
  const stream = await deps.blobs.get(record.blob_key);
  if (stream === null) {
    deps.logger.error({ artifactId: record.artifact_id, blobKey: record.blob_key }, 'artifact bytes missing');
    throw new ServiceError('internal', `the bytes of artifact ${record.artifact_id} are missing`);
  }
  return stream;
}
