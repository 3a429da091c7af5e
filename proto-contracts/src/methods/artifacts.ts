import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import { ArtifactMetadata, ArtifactsListFilter, Checksum, MimeType } from '../schemas/artifact.ts';
import { Id, Timestamp, pageOf, pageRequest, requestOf, versioned } from '../schemas/common.ts';
import { onControl } from './routing.ts';

/** Bounds of artifacts.get_ref URLs: lifetime in seconds. */
export const ARTIFACT_REF_TTL_SECONDS = { default: 900, min: 1, max: 86_400 } as const;

/**
 * artifacts.put: the bytes travel base64-encoded in `content_base64`, or, when
 * they do not fit one bus message, were streamed beforehand through the
 * artifact service's upload protocol and are named by `upload_id`. Exactly one
 * of the two (else `invalid_request`). The body identity's tenant may name
 * another tenant (admin only).
 */
export const ArtifactsPutRequest = requestOf({
  content_base64: z
    .base64()
    .optional()
    .describe('the bytes, standard base64; exactly one of content_base64 and upload_id'),
  upload_id: Id.optional().describe('a streamed upload to store instead of content_base64 (exactly one of the two)'),
  mime_type: MimeType,
  name: z.string().min(1).max(255).optional(),
  source: z.string().min(1).max(256).default('upload'),
  namespace: z.string().min(1).max(256).default('default'),
  checksum: Checksum.optional().describe('when given, the stored bytes must match it (else invalid_request)'),
});
export type ArtifactsPutRequest = z.infer<typeof ArtifactsPutRequest>;

/** The stored artifact's metadata. */
export const ArtifactsPutResponse = versioned({ artifact: ArtifactMetadata });
export type ArtifactsPutResponse = z.infer<typeof ArtifactsPutResponse>;

/** artifacts.get: metadata, and the bytes unless `include_content` is false. */
export const ArtifactsGetRequest = requestOf({
  artifact_id: Id,
  include_content: z.boolean().default(true),
});
export type ArtifactsGetRequest = z.infer<typeof ArtifactsGetRequest>;

/** Metadata and (unless declined) the bytes. */
export const ArtifactsGetResponse = versioned({
  artifact: ArtifactMetadata,
  content_base64: z.string().optional().describe('absent when include_content was false'),
});
export type ArtifactsGetResponse = z.infer<typeof ArtifactsGetResponse>;

/** artifacts.get_ref: a presigned URL (501 presign_unsupported when the blob driver cannot presign). */
export const ArtifactsGetRefRequest = requestOf({
  artifact_id: Id,
  expires_in_seconds: z
    .int()
    .min(ARTIFACT_REF_TTL_SECONDS.min)
    .max(ARTIFACT_REF_TTL_SECONDS.max)
    .default(ARTIFACT_REF_TTL_SECONDS.default),
});
export type ArtifactsGetRefRequest = z.infer<typeof ArtifactsGetRefRequest>;

/** A time-limited URL to the bytes. */
export const ArtifactsGetRefResponse = versioned({
  artifact_id: z.string(),
  url: z.string(),
  expires_at: Timestamp,
});
export type ArtifactsGetRefResponse = z.infer<typeof ArtifactsGetRefResponse>;

/** artifacts.list: tenant and user from the body identity (folding rules), `filter.session` narrows. */
export const ArtifactsListRequest = requestOf({
  filter: ArtifactsListFilter.optional(),
  ...pageRequest,
});
export type ArtifactsListRequest = z.infer<typeof ArtifactsListRequest>;

/** A page of artifact metadata, newest first. */
export const ArtifactsListResponse = versioned({ ...pageOf(ArtifactMetadata) });
export type ArtifactsListResponse = z.infer<typeof ArtifactsListResponse>;

/** artifacts.delete (admin): metadata and bytes. */
export const ArtifactsDeleteRequest = requestOf({ artifact_id: Id });
export type ArtifactsDeleteRequest = z.infer<typeof ArtifactsDeleteRequest>;

/** Whether something was deleted. */
export const ArtifactsDeleteResponse = versioned({ artifact_id: z.string(), deleted: z.boolean() });
export type ArtifactsDeleteResponse = z.infer<typeof ArtifactsDeleteResponse>;

/** Artifact methods (artifact service): `/v1/control/<method>`. */
export const ARTIFACT_METHODS: readonly MethodDef[] = [
  defineMethod({
    name: 'artifacts.put',
    family: 'artifacts',
    ...onControl('artifacts.put'),
    service: 'artifact',
    auth: ['M'],
    crossing: { tenant: 'admin' },
    requestName: 'ArtifactsPutRequest',
    responseName: 'ArtifactsPutResponse',
    request: ArtifactsPutRequest,
    response: ArtifactsPutResponse,
    summary: 'Upload an artifact (bytes and metadata).',
  }),
  defineMethod({
    name: 'artifacts.get',
    family: 'artifacts',
    ...onControl('artifacts.get'),
    service: 'artifact',
    auth: ['R'],
    requestName: 'ArtifactsGetRequest',
    responseName: 'ArtifactsGetResponse',
    request: ArtifactsGetRequest,
    response: ArtifactsGetResponse,
    summary: "Read an artifact's metadata and bytes.",
  }),
  defineMethod({
    name: 'artifacts.get_ref',
    family: 'artifacts',
    ...onControl('artifacts.get_ref'),
    service: 'artifact',
    auth: ['R'],
    crossing: { tenant: 'never' },
    requestName: 'ArtifactsGetRefRequest',
    responseName: 'ArtifactsGetRefResponse',
    request: ArtifactsGetRefRequest,
    response: ArtifactsGetRefResponse,
    summary: 'Get a time-limited presigned URL to the bytes of an artifact.',
  }),
  defineMethod({
    name: 'artifacts.list',
    family: 'artifacts',
    ...onControl('artifacts.list'),
    service: 'artifact',
    auth: ['R', 'X'],
    crossing: { tenant: 'admin_or_fleet', user: 'admin_or_fleet' },
    requestName: 'ArtifactsListRequest',
    responseName: 'ArtifactsListResponse',
    request: ArtifactsListRequest,
    response: ArtifactsListResponse,
    summary: 'List artifact metadata (folding rules on user and session).',
  }),
  defineMethod({
    name: 'artifacts.delete',
    family: 'artifacts',
    ...onControl('artifacts.delete'),
    service: 'artifact',
    auth: ['M', 'A'],
    crossing: { tenant: 'admin' },
    requestName: 'ArtifactsDeleteRequest',
    responseName: 'ArtifactsDeleteResponse',
    request: ArtifactsDeleteRequest,
    response: ArtifactsDeleteResponse,
    summary: 'Delete an artifact (admin).',
  }),
];
