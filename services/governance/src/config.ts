import { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';
import { parseCurrencyRates } from './domain/currency.ts';
import { decodeKeyEncryptionKey } from './domain/sealing.ts';

/** The deployment modes; the same variable the gateway reads. */
export const AUTH_MODES = ['dev', 'production'] as const;

/**
 * The governance service's environment: the base variables plus its own.
 * Every value is read once at boot; the key-encryption key is never logged.
 */
export const GovernanceConfig = BaseServiceConfig.extend({
  ARS_AUTH_MODE: z
    .enum(AUTH_MODES)
    .default('dev')
    .describe(
      'Deployment mode, shared with the gateway: dev (default) generates a key-encryption key under DATA_DIR when GOVERNANCE_KEY_ENCRYPTION_KEY is unset; production requires it.',
    ),
  GOVERNANCE_KEY_ENCRYPTION_KEY: z
    .string()
    .refine(
      (value) => decodeKeyEncryptionKey(value) !== undefined,
      'must be 32 bytes as 64 hex digits or as base64/base64url',
    )
    .optional()
    .describe(
      'AES-256-GCM key that encrypts provider API keys at rest: 32 bytes as 64 hex digits or base64. Unset in dev: generated once into DATA_DIR/governance/key-encryption.key (mode 0600) and reused. Required in production; every replica needs the same value.',
    ),
  GOVERNANCE_CURRENCY_RATES: z
    .string()
    .refine((value) => parseCurrencyRates(value) !== undefined, 'must be a list like EUR=0.92,GBP=0.79')
    .optional()
    .describe(
      'Units of each non-USD budget currency per 1 USD, e.g. "EUR=0.92,GBP=0.79". Costs are recorded in USD; a budget in a currency without a rate is refused. USD is always 1.',
    ),
  GOVERNANCE_PROVIDER_HEALTH_WINDOW_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(300)
    .describe(
      'Seconds a provider counts as unhealthy in llm.posture after a failover away from it; 0 never marks one unhealthy. Default 300.',
    ),
  GOVERNANCE_COST_RECEIPT_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(8_760)
    .default(24)
    .describe(
      'Hours a recorded LLM call keeps its receipt (the call_id that makes _governance.record_cost idempotent); older receipts are deleted, so a call_id sent again after this long counts again. Default 24.',
    ),
  GOVERNANCE_COST_RECEIPT_PRUNE_INTERVAL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(600)
    .describe('Seconds between two passes that delete expired cost receipts; one pass also runs at boot. Default 600.'),
}).superRefine((config, ctx) => {
  if (config.ARS_AUTH_MODE === 'production' && config.GOVERNANCE_KEY_ENCRYPTION_KEY === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['GOVERNANCE_KEY_ENCRYPTION_KEY'],
      message: 'is required when ARS_AUTH_MODE=production',
    });
  }
});
export type GovernanceConfig = z.infer<typeof GovernanceConfig>;
