import { defineService } from '@ars/service-kit';
import { SessionConfig } from './config.ts';

/**
 * The session service: sessions.*, state.history and search.sessions; the session catalog, idle reaping and the erasure cascade.
 * Every registry method it owns answers `unimplemented` until its handler is built.
 */
export const sessionService = defineService({
  name: 'session',
  version: '0.1.0',
  config: SessionConfig,
  build: async () => ({ handlers: {} }),
});
