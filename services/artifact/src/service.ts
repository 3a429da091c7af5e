import { defineService } from '@ars/service-kit';
import { ArtifactConfig } from './config.ts';

/**
 * The artifact service: artifacts.* and search.artifacts; metadata in the store, bytes in the blob driver.
 * Every registry method it owns answers `unimplemented` until its handler is built.
 */
export const artifactService = defineService({
  name: 'artifact',
  version: '0.1.0',
  config: ArtifactConfig,
  build: async () => ({ handlers: {} }),
});
