import { PROTOCOL_VERSION, ServiceError, ArtifactsGetRefRequest } from '@ars/contracts';
import type { ArtifactsGetRefResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { ArtifactDeps } from './deps.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';
import { readableArtifact } from './read-access.ts';

/**
 * artifacts.get_ref: a presigned URL to the bytes of one of the caller's
 * artifacts. Crosses tenants for no claim (403 `scope_mismatch` from the
 * identity gate); a driver that cannot presign answers 501 `presign_unsupported`.
 */
export function createGetRefHandler(deps: ArtifactDeps): RpcHandler {
  return typedMethod(
    ArtifactsGetRefRequest,
    async ({ identity: verified, body: request }): Promise<ArtifactsGetRefResponse> => {
      const target = reconcileIdentity('artifacts.get_ref', verified, request.identity);
      const record = await readableArtifact(deps, target, request.artifact_id);
      if (deps.blobs.presign === undefined) {
        throw new ServiceError(
          'presign_unsupported',
          `the ${deps.blobs.kind} blob driver cannot presign URLs; read the bytes with artifacts.get`,
        );
      }
      const ref = await deps.blobs.presign(record.blob_key, request.expires_in_seconds);
      return {
        artifact_id: record.artifact_id,
        url: ref.url,
        expires_at: ref.expires_at,
        protocol_version: PROTOCOL_VERSION,
      };
    },
  );
}
