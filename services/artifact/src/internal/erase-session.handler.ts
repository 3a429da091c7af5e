import { ARTIFACT_ERASE_SESSION } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import type { ArtifactDeps } from '../handlers/deps.ts';
import { eraseArtifact } from '../handlers/delete.handler.ts';

/**
 * `_artifact.erase_session {tenant, user, session}` →
 * `{artifacts_deleted, uploads_discarded}`: the session's artifacts (metadata
 * and bytes) and its unfinished uploads. Idempotent: a second call finds
 * nothing and answers zeros. Publishes no `artifacts.deleted`: the erasure is
 * reported once, by `session.erased`, and the session's events are purged.
 */
export function createEraseSessionHandler(deps: ArtifactDeps): InternalHandler {
  return serveInternal(ARTIFACT_ERASE_SESSION, async ({ body: owner }) => {
    let artifactsDeleted = 0;
    for (const record of await deps.artifacts.findBySession(owner)) {
      if (await eraseArtifact(deps, record)) artifactsDeleted += 1;
    }
    let uploadsDiscarded = 0;
    for (const upload of await deps.uploads.findBySession(owner)) {
      await deps.blobs.delete(upload.blob_key);
      if (await deps.uploads.delete(upload.upload_id)) uploadsDiscarded += 1;
    }
    deps.logger.info({ artifactsDeleted, uploadsDiscarded }, 'session artifacts erased');
    return { artifacts_deleted: artifactsDeleted, uploads_discarded: uploadsDiscarded };
  });
}
