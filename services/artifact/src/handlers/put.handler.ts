import { createHash, randomUUID } from 'node:crypto';
import { PROTOCOL_VERSION, ServiceError, ArtifactsPutRequest } from '@ars/contracts';
import type { ArtifactsPutResponse, VerifiedIdentity } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { checksumOf, toMetadata } from '../domain/artifact.ts';
import type { ArtifactRecord } from '../domain/artifact.ts';
import { assertWithinLimit } from '../domain/size-limit.ts';
import { publishAfterCommit } from './deps.ts';
import type { ArtifactDeps } from './deps.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';

/** Bytes that are in the blob driver, not yet described by metadata. */
interface StoredBytes {
  readonly blob_key: string;
  readonly size_bytes: number;
  readonly checksum: string;
  /** The upload to forget once the metadata is stored. */
  readonly upload_id?: string;
}

/** Newly generated blob key. */
export function newBlobKey(): string {
  return `blobs/${randomUUID()}`;
}

function checksumMismatch(expected: string, actual: string): ServiceError {
  return new ServiceError('invalid_request', `checksum: the bytes hash to ${actual}, not ${expected}`);
}

/** The base64 path: bytes that fit one bus message. Nothing is stored when a check fails. */
async function storeInline(deps: ArtifactDeps, request: ArtifactsPutRequest, base64: string): Promise<StoredBytes> {
  const bytes = Buffer.from(base64, 'base64');
  assertWithinLimit(bytes.length, deps.maxBytes);
  const checksum = checksumOf(createHash('sha256').update(bytes).digest('hex'));
  if (request.checksum !== undefined && request.checksum !== checksum)
    throw checksumMismatch(request.checksum, checksum);
  const blobKey = newBlobKey();
  const info = await deps.blobs.put(blobKey, bytes);
  return { blob_key: blobKey, size_bytes: info.size_bytes, checksum: checksumOf(info.sha256) };
}

/** Forgets an upload and its bytes (refused or expired). */
async function discardUpload(deps: ArtifactDeps, uploadId: string, blobKey: string): Promise<void> {
  await deps.blobs.delete(blobKey);
  await deps.uploads.delete(uploadId);
}

/**
 * The streaming path: the caller began an upload and streamed the bytes into
 * its blob; they become the artifact's bytes without a copy. An upload past
 * the size limit or with the wrong checksum is discarded, nothing stored.
 */
async function adoptUpload(
  deps: ArtifactDeps,
  verified: VerifiedIdentity,
  request: ArtifactsPutRequest,
  uploadId: string,
): Promise<StoredBytes> {
  const upload = await deps.uploads.findById(uploadId);
  if (upload === null || upload.tenant !== verified.tenant || upload.user !== verified.user) {
    throw new ServiceError('not_found', `upload ${uploadId} not found`);
  }
  if (upload.expires_at <= deps.now().toISOString()) {
    await discardUpload(deps, upload.upload_id, upload.blob_key);
    throw new ServiceError('not_found', `upload ${uploadId} expired before it was finished`);
  }
  const info = await deps.blobs.stat(upload.blob_key);
  if (info === null) throw new ServiceError('invalid_request', `upload ${uploadId} has no bytes yet`);
  if (info.size_bytes > deps.maxBytes) {
    await discardUpload(deps, upload.upload_id, upload.blob_key);
    assertWithinLimit(info.size_bytes, deps.maxBytes);
  }
  const checksum = checksumOf(info.sha256);
  if (request.checksum !== undefined && request.checksum !== checksum) {
    await discardUpload(deps, upload.upload_id, upload.blob_key);
    throw checksumMismatch(request.checksum, checksum);
  }
  return { blob_key: upload.blob_key, size_bytes: info.size_bytes, checksum, upload_id: upload.upload_id };
}

/**
 * artifacts.put: stores the bytes (inline base64, or a finished streaming
 * upload) and their metadata under the target identity, then publishes
 * `artifacts.uploaded`. A target tenant other than the caller's needs admin.
 */
export function createPutHandler(deps: ArtifactDeps): RpcHandler {
  return typedMethod(
    ArtifactsPutRequest,
    async ({ identity: verified, body: request }): Promise<ArtifactsPutResponse> => {
      // A target tenant other than the caller's needs admin (403 scope_mismatch from the gate).
      const target = reconcileIdentity('artifacts.put', verified, request.identity);
      const { content_base64: inline, upload_id: uploadId } = request;
      if ((inline === undefined) === (uploadId === undefined)) {
        throw new ServiceError('invalid_request', 'artifacts.put takes exactly one of content_base64 and upload_id');
      }
      const stored =
        inline === undefined
          ? await adoptUpload(deps, verified, request, uploadId as string)
          : await storeInline(deps, request, inline);
      const artifactId = deps.newId();
      const record: ArtifactRecord = {
        _id: artifactId,
        artifact_id: artifactId,
        tenant: target.tenant,
        user: target.user,
        session: target.session,
        mime_type: request.mime_type,
        size_bytes: stored.size_bytes,
        source: request.source,
        namespace: request.namespace,
        ...(request.name === undefined ? {} : { name: request.name }),
        checksum: stored.checksum,
        created_at: deps.now().toISOString(),
        blob_key: stored.blob_key,
      };
      try {
        await deps.artifacts.insert(record);
      } catch (error) {
        // Inline bytes would be orphaned; an upload stays finalisable by a retry.
        if (stored.upload_id === undefined) await deps.blobs.delete(stored.blob_key).catch(() => undefined);
        throw error;
      }
      if (stored.upload_id !== undefined) await deps.uploads.delete(stored.upload_id);
      deps.logger.info(
        { artifactId, sizeBytes: record.size_bytes, streamed: uploadId !== undefined },
        'artifact stored',
      );
      await publishAfterCommit(deps, {
        type: 'artifacts.uploaded',
        identity: { tenant: record.tenant, user: record.user, session: record.session },
        payload: {
          artifact_id: artifactId,
          mime_type: record.mime_type,
          size_bytes: record.size_bytes,
          source: record.source,
          namespace: record.namespace,
        },
      });
      return { artifact: toMetadata(record), protocol_version: PROTOCOL_VERSION };
    },
  );
}
