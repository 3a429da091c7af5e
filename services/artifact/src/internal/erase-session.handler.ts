import type { RpcHandler } from '@ars/bus';
import type { ArtifactDeps } from '../handlers/deps.ts';
import { eraseArtifact } from '../handlers/delete.handler.ts';
import { parseBody } from './parse.ts';
import { EraseSessionRequest } from './schemas.ts';

export const ERASE_SESSION_ENDPOINT = '_artifact.erase_session';

/**
 * `_artifact.erase_session {tenant, user, session}` →
 * `{artifacts_deleted, uploads_discarded}`: the session's artifacts (metadata
 * and bytes) and its unfinished uploads. Idempotent: a second call finds
 * nothing and answers zeros. Publishes no `artifacts.deleted`: the erasure is
 * reported once, by `session.erased`, and the session's events are purged.
 */
export function createEraseSessionHandler(deps: ArtifactDeps): RpcHandler {
  return async ({ body }) => {
    const owner = parseBody(ERASE_SESSION_ENDPOINT, EraseSessionRequest, body);
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
  };
}
