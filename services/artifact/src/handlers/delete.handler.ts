import { isAdmin } from '@ars/auth';
import { PROTOCOL_VERSION, ServiceError, ArtifactsDeleteRequest } from '@ars/contracts';
import type { ArtifactsDeleteResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { ArtifactRecord } from '../domain/artifact.ts';
import { publishAfterCommit } from './deps.ts';
import type { ArtifactDeps } from './deps.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';

/**
 * Deletes bytes, then metadata: a failure in between leaves metadata whose
 * delete a retry completes, never bytes nobody can find.
 */
export async function eraseArtifact(deps: ArtifactDeps, record: ArtifactRecord): Promise<boolean> {
  await deps.blobs.delete(record.blob_key);
  return deps.artifacts.delete(record.artifact_id);
}

/**
 * artifacts.delete (admin): any artifact of the target tenant (the body
 * tenant may name another tenant), bytes too. A missing or foreign artifact
 * answers `deleted: false`. Publishes `artifacts.deleted`.
 */
export function createDeleteHandler(deps: ArtifactDeps): RpcHandler {
  return typedMethod(
    ArtifactsDeleteRequest,
    async ({ identity: verified, body: request }): Promise<ArtifactsDeleteResponse> => {
      const target = reconcileIdentity('artifacts.delete', verified, request.identity);
      if (!isAdmin(verified.scopes)) {
        throw new ServiceError('identity_scope_required', 'artifacts.delete needs the admin claim');
      }
      const record = await deps.artifacts.findById(request.artifact_id);
      const deleted = record !== null && record.tenant === target.tenant && (await eraseArtifact(deps, record));
      if (record !== null && deleted) {
        deps.logger.info({ artifactId: record.artifact_id }, 'artifact deleted');
        await publishAfterCommit(deps, {
          type: 'artifacts.deleted',
          identity: { tenant: record.tenant, user: record.user, session: record.session },
          payload: { artifact_id: record.artifact_id },
        });
      }
      return { artifact_id: request.artifact_id, deleted, protocol_version: PROTOCOL_VERSION };
    },
  );
}
