import { randomUUID } from 'node:crypto';
import { ARTIFACTS_OBJECT_STORE, openObjectStore } from '@ars/bus';
import type { Bus } from '@ars/bus';
import { defineService } from '@ars/service-kit';
import type { BlobDriver } from './blob/blob-driver.ts';
import { createObjectStoreDriver } from './blob/object-store.driver.ts';
import { ArtifactConfig } from './config.ts';
import { createDeleteHandler } from './handlers/delete.handler.ts';
import type { ArtifactDeps } from './handlers/deps.ts';
import { createGetRefHandler } from './handlers/get-ref.handler.ts';
import { createGetHandler } from './handlers/get.handler.ts';
import { createListHandler } from './handlers/list.handler.ts';
import { createPutHandler } from './handlers/put.handler.ts';
import { createSearchHandler } from './handlers/search.handler.ts';
import { createEraseSessionHandler } from './internal/erase-session.handler.ts';
import { createResolveHandler } from './internal/resolve.handler.ts';
import {
  createDownloadBeginHandler,
  createUploadAbortHandler,
  createUploadBeginHandler,
} from './internal/upload.handlers.ts';
import { startUploadSweeper } from './internal/upload-sweeper.ts';
import { createArtifactRepository } from './store/artifact.repository.ts';
import { createUploadRepository } from './store/upload.repository.ts';

/** The NATS default when the server did not say (1 MiB). */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

async function openBlobDriver(bus: Bus): Promise<BlobDriver> {
  const store = await openObjectStore(bus, ARTIFACTS_OBJECT_STORE);
  return createObjectStoreDriver({ store, bucket: ARTIFACTS_OBJECT_STORE });
}

/**
 * The artifact service: artifacts.* and search.artifacts; metadata in the
 * store, bytes in the blob driver (the `ars_artifacts` JetStream object store).
 * Internal endpoints: `_artifact.resolve`, `_artifact.erase_session`, and the
 * streaming transfer endpoints `_artifact.upload_begin`, `_artifact.upload_abort` and
 * `_artifact.download_begin`.
 */
export const artifactService = defineService({
  name: 'artifact',
  version: '0.1.0',
  config: ArtifactConfig,
  build: async ({ config, bus, store, logger, publisher }) => {
    const artifacts = createArtifactRepository(store);
    const uploads = createUploadRepository(store);
    await artifacts.ensureIndexes();
    await uploads.ensureIndexes();
    const deps: ArtifactDeps = {
      artifacts,
      uploads,
      blobs: await openBlobDriver(bus),
      publisher,
      logger,
      maxBytes: config.ARTIFACT_MAX_BYTES,
      uploadTtlSeconds: config.ARTIFACT_UPLOAD_TTL_SECONDS,
      maxPayload: () => bus.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD,
      now: () => new Date(),
      newId: () => randomUUID(),
    };
    const sweepEveryMs = Math.min(config.ARTIFACT_UPLOAD_TTL_SECONDS * 500, 60_000);
    const stopSweeper = startUploadSweeper(deps, { intervalMs: sweepEveryMs });
    return {
      handlers: {
        'artifacts.put': createPutHandler(deps),
        'artifacts.get': createGetHandler(deps),
        'artifacts.get_ref': createGetRefHandler(deps),
        'artifacts.list': createListHandler(deps),
        'artifacts.delete': createDeleteHandler(deps),
        'search.artifacts': createSearchHandler(deps),
      },
      internalHandlers: [
        createResolveHandler(deps),
        createEraseSessionHandler(deps),
        createUploadBeginHandler(deps),
        createUploadAbortHandler(deps),
        createDownloadBeginHandler(deps),
      ],
      metadata: { blob_driver: deps.blobs.kind, artifact_max_bytes: String(config.ARTIFACT_MAX_BYTES) },
      stop: stopSweeper,
    };
  },
});
