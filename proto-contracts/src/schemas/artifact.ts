import { z } from 'zod';
import { Id, Timestamp, record, timeWindow } from './common.ts';

/** Artifact metadata; the bytes travel only on artifacts.put and artifacts.get. */
export const ArtifactMetadata = record({
  artifact_id: z.string(),
  mime_type: z.string(),
  size_bytes: z.int().nonnegative(),
  source: z.string().describe('who produced it, e.g. upload, tool:<name>, llm'),
  namespace: z.string().describe('caller-chosen grouping; default "default"'),
  tenant: z.string(),
  user: z.string(),
  session: z.string(),
  checksum: z.string().describe('sha256:<lowercase hex> of the bytes'),
  name: z.string().optional().describe('optional file name'),
  created_at: Timestamp,
});
export type ArtifactMetadata = z.infer<typeof ArtifactMetadata>;

/** A MIME type `type/subtype` with optional parameters. */
export const MimeType = z
  .string()
  .min(3)
  .max(255)
  .regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/)
  .describe('MIME type, e.g. image/png');

/** A sha256 checksum in the `sha256:<hex>` form. */
export const Checksum = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/)
  .describe('sha256:<lowercase hex>');

/**
 * Filters of artifacts.list. The isolation principals (tenant, user) are the
 * body identity's; the session narrowing is `filter.session` because the body
 * identity's session is always backfilled.
 */
export const ArtifactsListFilter = z.strictObject({
  session: Id.optional().describe('narrow to one session; omitted means every session in scope'),
  namespace: z.string().min(1).optional(),
  source: z.string().min(1).optional(),
  mime_type: z.string().min(1).optional(),
  ...timeWindow,
});
export type ArtifactsListFilter = z.infer<typeof ArtifactsListFilter>;

export type MimeType = z.infer<typeof MimeType>;
export type Checksum = z.infer<typeof Checksum>;
