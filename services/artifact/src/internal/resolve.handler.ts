import { ServiceError } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { isOwnedBy } from '../domain/artifact.ts';
import type { ArtifactDeps } from '../handlers/deps.ts';
import { parseBody } from './parse.ts';
import { ResolveRequest } from './schemas.ts';

export const RESOLVE_ENDPOINT = '_artifact.resolve';

/** One resolved input artifact. */
export interface ResolvedArtifact {
  readonly artifact_id: string;
  readonly mime_type: string;
  readonly size_bytes: number;
  readonly namespace: string;
  readonly source: string;
}

/**
 * `_artifact.resolve {tenant, user, session, artifact_ids}` →
 * `{artifacts}` in request order, for the run engine's input artifacts. An id
 * that does not exist or that this (tenant, user) may not read is
 * `invalid_request` naming it (the same message either way).
 */
export function createResolveHandler(deps: ArtifactDeps): RpcHandler {
  return async ({ body }) => {
    const request = parseBody(RESOLVE_ENDPOINT, ResolveRequest, body);
    const artifacts: ResolvedArtifact[] = [];
    for (const artifactId of request.artifact_ids) {
      const record = await deps.artifacts.findById(artifactId);
      if (record === null || !isOwnedBy(record, request)) {
        throw new ServiceError('invalid_request', `input artifact ${artifactId} does not exist or may not be read`);
      }
      const { mime_type, size_bytes, namespace, source } = record;
      artifacts.push({ artifact_id: artifactId, mime_type, size_bytes, namespace, source });
    }
    return { artifacts };
  };
}
