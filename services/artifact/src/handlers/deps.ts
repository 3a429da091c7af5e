import type { EventPublisher, PublishEventInput } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { BlobDriver } from '../blob/blob-driver.ts';
import type { ArtifactRepository } from '../store/artifact.repository.ts';
import type { UploadRepository } from '../store/upload.repository.ts';

/** What every artifact handler works with; built once in `service.ts`. */
export interface ArtifactDeps {
  readonly artifacts: ArtifactRepository;
  readonly uploads: UploadRepository;
  readonly blobs: BlobDriver;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
  /** ARTIFACT_MAX_BYTES. */
  readonly maxBytes: number;
  /** ARTIFACT_UPLOAD_TTL_SECONDS. */
  readonly uploadTtlSeconds: number;
  /** The bus's largest message in bytes (the server's `max_payload`), read when needed. */
  readonly maxPayload: () => number;
  readonly now: () => Date;
  readonly newId: () => string;
}

/**
 * Publishes an event after the change it reports is stored. A failed publish
 * is logged, not thrown: the caller's write already happened and a retry
 * would store it twice.
 */
export async function publishAfterCommit(deps: ArtifactDeps, event: PublishEventInput): Promise<void> {
  try {
    await deps.publisher.publish(event);
  } catch (error) {
    deps.logger.error({ err: error, eventType: event.type }, 'event publish failed after commit');
  }
}
