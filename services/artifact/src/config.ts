import { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';

/** The artifact service's environment: the base variables plus its own. */
export const ArtifactConfig = BaseServiceConfig.extend({
  ARTIFACT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024)
    .describe(
      'Largest artifact accepted, in bytes; a bigger upload is refused payload_too_large. Default 67108864 (64 MiB).',
    ),
});
export type ArtifactConfig = z.infer<typeof ArtifactConfig>;
