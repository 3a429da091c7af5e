import { ARTIFACT_RESOLVE, refuse } from '@ars/contracts';
import type { ResolvedArtifact } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { isOwnedBy } from '../domain/artifact.ts';
import type { ArtifactDeps } from '../handlers/deps.ts';

/**
 * `_artifact.resolve {tenant, user, session, artifact_ids}` →
 * `{artifacts}` in request order, for the run engine's input artifacts. An id
 * that does not exist or that this (tenant, user) may not read is refused
 * `unreadable_artifact` (400 `invalid_request`) naming it, with the same
 * message either way.
 */
export function createResolveHandler(deps: ArtifactDeps): InternalHandler {
  return serveInternal(ARTIFACT_RESOLVE, async ({ body: request }) => {
    const artifacts: ResolvedArtifact[] = [];
    for (const artifactId of request.artifact_ids) {
      const record = await deps.artifacts.findById(artifactId);
      if (record === null || !isOwnedBy(record, request)) {
        throw refuse(
          ARTIFACT_RESOLVE,
          'unreadable_artifact',
          `input artifact ${artifactId} does not exist or may not be read`,
        );
      }
      const { mime_type, size_bytes, namespace, source } = record;
      artifacts.push({ artifact_id: artifactId, mime_type, size_bytes, namespace, source });
    }
    return { artifacts };
  });
}
