import { z } from 'zod';
import { IdentityScope } from '../identity.ts';
import { defineInternalEndpoint } from '../internal-def.ts';
import { ArtifactMetadata } from '../schemas/artifact.ts';
import { Id, Timestamp } from '../schemas/common.ts';
import { Count, OwnerTriple, tripleShape } from './shapes.ts';

const NO_STREAMING = {
  code: 'unimplemented',
  retryable: false,
  summary: "the artifact service's blob driver offers no place to stream bytes through",
} as const;

/**
 * Where a trusted peer writes or reads an artifact's bytes directly, beside
 * the RPC: a JetStream object store entry (`transport` `nats_object_store`).
 */
export const BlobLocation = z.object({
  transport: z.string().describe('nats_object_store; a caller refuses one it cannot use'),
  bucket: z.string().describe('the object store bucket, e.g. ars_artifacts'),
  object_name: z.string(),
});
export type BlobLocation = z.infer<typeof BlobLocation>;

/** `_artifact.resolve`: may this (tenant, user) read these artifacts? */
export const ArtifactResolveRequest = z.strictObject({ ...tripleShape, artifact_ids: z.array(Id).max(100) });
export type ArtifactResolveRequest = z.infer<typeof ArtifactResolveRequest>;

/** One resolved input artifact. */
export const ResolvedArtifact = z.object({
  artifact_id: z.string(),
  mime_type: z.string(),
  size_bytes: z.int().nonnegative(),
  namespace: z.string(),
  source: z.string(),
});
export type ResolvedArtifact = z.infer<typeof ResolvedArtifact>;

/** The artifacts, in request order. */
export const ArtifactResolveReply = z.object({ artifacts: z.array(ResolvedArtifact) });
export type ArtifactResolveReply = z.infer<typeof ArtifactResolveReply>;

/** `_artifact.resolve`: asked by `start` for its input artifacts. */
export const ARTIFACT_RESOLVE = defineInternalEndpoint({
  name: '_artifact.resolve',
  service: 'artifact',
  callers: ['run-executor'],
  gate: 'caller',
  request: ArtifactResolveRequest,
  reply: ArtifactResolveReply,
  refusals: {
    unreadable_artifact: {
      code: 'invalid_request',
      retryable: false,
      summary: 'an input artifact does not exist or the caller may not read it (one message for both)',
    },
  },
  summary: 'the input artifacts of a start, if the caller may read them',
});

/** What the erasure removed. */
export const ArtifactEraseSessionReply = z.object({ artifacts_deleted: Count, uploads_discarded: Count });
export type ArtifactEraseSessionReply = z.infer<typeof ArtifactEraseSessionReply>;

/**
 * `_artifact.erase_session`: part of the erasure cascade of sessions.delete.
 * The session's artifacts (metadata and bytes) and unfinished uploads go.
 * Idempotent: a second call answers zeros.
 */
export const ARTIFACT_ERASE_SESSION = defineInternalEndpoint({
  name: '_artifact.erase_session',
  service: 'artifact',
  callers: ['session'],
  gate: 'caller',
  request: OwnerTriple,
  reply: ArtifactEraseSessionReply,
  refusals: {},
  summary: "erases a session's artifacts and unfinished uploads",
});

/** `_artifact.upload_begin`: optionally the size about to be streamed (refused early when too large). */
export const ArtifactUploadBeginRequest = z.strictObject({
  size_bytes: z.int().nonnegative().optional().describe('the number of bytes the caller will stream, when known'),
});
export type ArtifactUploadBeginRequest = z.infer<typeof ArtifactUploadBeginRequest>;

/** Where to stream the bytes, the most that will be accepted, and until when the upload holds. */
export const ArtifactUploadBeginReply = z.object({
  upload_id: z.string(),
  location: BlobLocation,
  max_bytes: z.int().nonnegative(),
  expires_at: Timestamp,
});
export type ArtifactUploadBeginReply = z.infer<typeof ArtifactUploadBeginReply>;

/**
 * `_artifact.upload_begin`: the caller streams the bytes into `location`
 * itself, then calls artifacts.put with `upload_id`. Bound to the verified
 * (tenant, user) of the call.
 */
export const ARTIFACT_UPLOAD_BEGIN = defineInternalEndpoint({
  name: '_artifact.upload_begin',
  service: 'artifact',
  callers: ['gateway', 'run-executor', 'agent-registry'],
  gate: 'caller',
  request: ArtifactUploadBeginRequest,
  reply: ArtifactUploadBeginReply,
  refusals: {
    too_large: {
      code: 'payload_too_large',
      retryable: false,
      summary: 'the announced size is over the artifact limit (ARTIFACT_MAX_BYTES)',
    },
    no_streaming: NO_STREAMING,
  },
  summary: 'begins a streamed upload',
});

/** `_artifact.upload_abort`: an upload the caller will not finalise. */
export const ArtifactUploadAbortRequest = z.strictObject({ upload_id: Id });
export type ArtifactUploadAbortRequest = z.infer<typeof ArtifactUploadAbortRequest>;

/** Whether anything was discarded (false for another's, a finalised or a missing upload). */
export const ArtifactUploadAbortReply = z.object({ upload_id: z.string(), discarded: z.boolean() });
export type ArtifactUploadAbortReply = z.infer<typeof ArtifactUploadAbortReply>;

/** `_artifact.upload_abort`: drops an unfinished upload and its bytes. Idempotent. */
export const ARTIFACT_UPLOAD_ABORT = defineInternalEndpoint({
  name: '_artifact.upload_abort',
  service: 'artifact',
  callers: ['gateway'],
  gate: 'caller',
  request: ArtifactUploadAbortRequest,
  reply: ArtifactUploadAbortReply,
  refusals: {},
  summary: 'drops an unfinished upload',
});

/** `_artifact.download_begin`: the artifacts.get body without `include_content`. */
export const ArtifactDownloadBeginRequest = z.strictObject({ identity: IdentityScope, artifact_id: Id });
export type ArtifactDownloadBeginRequest = z.infer<typeof ArtifactDownloadBeginRequest>;

/** The artifact's metadata and where to stream its bytes from. */
export const ArtifactDownloadBeginReply = z.object({ artifact: ArtifactMetadata, location: BlobLocation });
export type ArtifactDownloadBeginReply = z.infer<typeof ArtifactDownloadBeginReply>;

/**
 * `_artifact.download_begin`: the artifacts.get read rule (else
 * `not_found`), then where the caller streams the bytes from itself.
 */
export const ARTIFACT_DOWNLOAD_BEGIN = defineInternalEndpoint({
  name: '_artifact.download_begin',
  service: 'artifact',
  callers: ['gateway', 'run-executor'],
  gate: 'caller',
  request: ArtifactDownloadBeginRequest,
  reply: ArtifactDownloadBeginReply,
  refusals: { no_streaming: NO_STREAMING },
  summary: 'begins a streamed download',
});
