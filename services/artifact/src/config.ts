import { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';

/** Default largest artifact: 64 MiB. */
export const DEFAULT_ARTIFACT_MAX_BYTES = 64 * 1024 * 1024;
/** Default lifetime of an unfinished streaming upload: one hour. */
export const DEFAULT_UPLOAD_TTL_SECONDS = 3600;

/** The artifact service's environment: the base variables plus its own. */
export const ArtifactConfig = BaseServiceConfig.extend({
  ARTIFACT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(DEFAULT_ARTIFACT_MAX_BYTES)
    .describe(
      'Largest artifact accepted, in bytes; a bigger upload is refused payload_too_large and nothing is stored. ' +
        'Default 67108864 (64 MiB).',
    ),
  ARTIFACT_UPLOAD_TTL_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(DEFAULT_UPLOAD_TTL_SECONDS)
    .describe(
      'Seconds a streaming upload (_artifact.upload_begin) may stay unfinished before its bytes are discarded. ' +
        'Default 3600.',
    ),
  ARTIFACT_BLOB_DRIVER: z
    .enum(['jetstream'])
    .default('jetstream')
    .describe('Where artifact bytes live: jetstream (the ars_artifacts JetStream object store). Default jetstream.'),
});
export type ArtifactConfig = z.infer<typeof ArtifactConfig>;
