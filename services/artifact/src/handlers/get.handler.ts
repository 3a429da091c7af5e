import { PROTOCOL_VERSION, ServiceError, ArtifactsGetRequest } from '@ars/contracts';
import type { ArtifactsGetResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { toMetadata } from '../domain/artifact.ts';
import { inlineLimit } from '../domain/size-limit.ts';
import { readAll } from '../domain/stream-bytes.ts';
import type { ArtifactDeps } from './deps.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';
import { openBytes, readableArtifact } from './read-access.ts';

/**
 * artifacts.get: metadata and, unless declined, the bytes base64. Bytes too
 * large for one reply are refused `payload_too_large`; the gateway reads
 * those through `_artifact.download_begin` and streams them itself.
 */
export function createGetHandler(deps: ArtifactDeps): RpcHandler {
  return typedMethod(
    ArtifactsGetRequest,
    async ({ identity: verified, body: request }): Promise<ArtifactsGetResponse> => {
      const target = reconcileIdentity('artifacts.get', verified, request.identity);
      const record = await readableArtifact(deps, target, request.artifact_id);
      const artifact = toMetadata(record);
      if (!request.include_content) return { artifact, protocol_version: PROTOCOL_VERSION };
      const limit = inlineLimit(deps.maxPayload());
      if (record.size_bytes > limit) {
        throw new ServiceError(
          'payload_too_large',
          `artifact ${record.artifact_id} is ${record.size_bytes} bytes; at most ${limit} bytes are returned inline ` +
            '(read larger artifacts with include_content false and the streaming download)',
        );
      }
      const bytes = await readAll(await openBytes(deps, record), record.size_bytes);
      return { artifact, content_base64: bytes.toString('base64'), protocol_version: PROTOCOL_VERSION };
    },
  );
}
