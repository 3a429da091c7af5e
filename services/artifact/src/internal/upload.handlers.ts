import { ARTIFACT_DOWNLOAD_BEGIN, ARTIFACT_UPLOAD_ABORT, ARTIFACT_UPLOAD_BEGIN, refuse } from '@ars/contracts';
import { reconcileIdentity, serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import type { BlobDriver, BlobLocation } from '../blob/blob-driver.ts';
import { toMetadata } from '../domain/artifact.ts';
import { tooLargeMessage } from '../domain/size-limit.ts';
import type { ArtifactDeps } from '../handlers/deps.ts';
import { newBlobKey } from '../handlers/put.handler.ts';
import { readableArtifact } from '../handlers/read-access.ts';

function locate(
  blobs: BlobDriver,
  key: string,
  endpoint: typeof ARTIFACT_UPLOAD_BEGIN | typeof ARTIFACT_DOWNLOAD_BEGIN,
): BlobLocation {
  if (blobs.locate === undefined) {
    throw refuse(
      endpoint,
      'no_streaming',
      `${endpoint.name}: the ${blobs.kind} blob driver offers no streaming access`,
    );
  }
  return blobs.locate(key);
}

/**
 * `_artifact.upload_begin {size_bytes?}` → `{upload_id, location, max_bytes,
 * expires_at}`. The caller (the gateway) streams the bytes into
 * `location` (an object store entry) itself, then calls `artifacts.put` with
 * `upload_id` and the metadata. Bound to the verified (tenant, user) of this
 * call; an announced size over the limit is refused at once.
 */
export function createUploadBeginHandler(deps: ArtifactDeps): InternalHandler {
  return serveInternal(ARTIFACT_UPLOAD_BEGIN, async ({ identity: verified, body: request }) => {
    if (request.size_bytes !== undefined && request.size_bytes > deps.maxBytes) {
      throw refuse(ARTIFACT_UPLOAD_BEGIN, 'too_large', tooLargeMessage(request.size_bytes, deps.maxBytes));
    }
    const uploadId = deps.newId();
    const blobKey = newBlobKey();
    const location = locate(deps.blobs, blobKey, ARTIFACT_UPLOAD_BEGIN);
    const now = deps.now();
    const expiresAt = new Date(now.getTime() + deps.uploadTtlSeconds * 1000).toISOString();
    await deps.uploads.insert({
      _id: uploadId,
      upload_id: uploadId,
      tenant: verified.tenant,
      user: verified.user,
      session: verified.session,
      blob_key: blobKey,
      ...(request.size_bytes === undefined ? {} : { declared_bytes: request.size_bytes }),
      created_at: now.toISOString(),
      expires_at: expiresAt,
    });
    return { upload_id: uploadId, location, max_bytes: deps.maxBytes, expires_at: expiresAt };
  });
}

/**
 * `_artifact.download_begin {identity, artifact_id}` → `{artifact, location}`:
 * the artifacts.get read rule (the owner's tenant and user; else
 * `not_found`), then where the caller streams the bytes from itself.
 */
export function createDownloadBeginHandler(deps: ArtifactDeps): InternalHandler {
  return serveInternal(ARTIFACT_DOWNLOAD_BEGIN, async ({ identity: verified, body: request }) => {
    const target = reconcileIdentity('artifacts.get', verified, request.identity);
    const record = await readableArtifact(deps, target, request.artifact_id);
    return { artifact: toMetadata(record), location: locate(deps.blobs, record.blob_key, ARTIFACT_DOWNLOAD_BEGIN) };
  });
}

/**
 * `_artifact.upload_abort {upload_id}` → `{upload_id, discarded}`: drops an
 * unfinished upload and whatever bytes reached it (the gateway calls it when
 * the artifacts.put it streamed for is refused). Only the (tenant, user) that
 * began the upload may; anyone else's, a finalised one or a missing one
 * answers `discarded: false`. Idempotent. Never call it while an
 * artifacts.put naming the upload may still be running.
 */
export function createUploadAbortHandler(deps: ArtifactDeps): InternalHandler {
  return serveInternal(ARTIFACT_UPLOAD_ABORT, async ({ identity: verified, body: request }) => {
    const upload = await deps.uploads.findById(request.upload_id);
    if (upload === null || upload.tenant !== verified.tenant || upload.user !== verified.user) {
      return { upload_id: request.upload_id, discarded: false };
    }
    await deps.blobs.delete(upload.blob_key);
    const discarded = await deps.uploads.delete(upload.upload_id);
    deps.logger.info({ uploadId: upload.upload_id }, 'upload aborted');
    return { upload_id: request.upload_id, discarded };
  });
}
