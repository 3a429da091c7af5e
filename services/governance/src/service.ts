import { defineService } from '@ars/service-kit';
import { GovernanceConfig } from './config.ts';

/**
 * The governance service: governance.*, governance.posture, llm.posture and auth.rotate_token; budgets, rate limits, tenant overrides and provider keys.
 * Every registry method it owns answers `unimplemented` until its handler is built.
 */
export const governanceService = defineService({
  name: 'governance',
  version: '0.1.0',
  config: GovernanceConfig,
  build: async () => ({ handlers: {} }),
});
