import { z } from 'zod';
import { Id, IdentityScope } from '@ars/contracts';

/**
 * Bodies of the artifact service's internal endpoints (service to service,
 * never routed by the gateway). Strict: an unknown member is `invalid_request`.
 */

const Triple = {
  tenant: z.string().min(1),
  user: z.string().min(1),
  session: z.string().min(1),
};

/** `_artifact.resolve`: may this (tenant, user) read these artifacts? */
export const ResolveRequest = z.strictObject({ ...Triple, artifact_ids: z.array(Id).max(100) });
export type ResolveRequest = z.infer<typeof ResolveRequest>;

/** `_artifact.erase_session`: the session whose artifacts (and pending uploads) go. */
export const EraseSessionRequest = z.strictObject(Triple);
export type EraseSessionRequest = z.infer<typeof EraseSessionRequest>;

/** `_artifact.upload_begin`: optionally the size about to be streamed (refused early when too large). */
export const UploadBeginRequest = z.strictObject({
  size_bytes: z.int().nonnegative().optional().describe('the number of bytes the caller will stream, when known'),
});
export type UploadBeginRequest = z.infer<typeof UploadBeginRequest>;

/** `_artifact.download_begin`: the artifacts.get body without `include_content`. */
export const DownloadBeginRequest = z.strictObject({ identity: IdentityScope, artifact_id: Id });
export type DownloadBeginRequest = z.infer<typeof DownloadBeginRequest>;

/** `_artifact.upload_abort`: an upload the caller will not finalise. */
export const UploadAbortRequest = z.strictObject({ upload_id: Id });
export type UploadAbortRequest = z.infer<typeof UploadAbortRequest>;
