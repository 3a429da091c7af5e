import { tenantBudgetHandler } from './handlers/tenant-budget.handler.ts';
import { createConfigChangeAnnouncer } from '@ars/bus';
import { defineService, startPeriodic } from '@ars/service-kit';
import { observeWrites } from '@ars/store';
import type { ServiceContext, ServiceImplementation } from '@ars/service-kit';
import { GovernanceConfig } from './config.ts';
import { parseCurrencyRates } from './domain/currency.ts';
import { admitLlmCallHandler } from './handlers/admit-llm-call.handler.ts';
import type { GovernanceContext } from './handlers/context.ts';
import { effectiveOverridesHandler } from './handlers/effective-overrides.handler.ts';
import { failoverHandler } from './handlers/failover.handler.ts';
import { governancePostureHandler, llmPostureHandler } from './handlers/posture.handler.ts';
import { providerKeyHandler } from './handlers/provider-key.handler.ts';
import { recordCostHandler } from './handlers/record-cost.handler.ts';
import { recordCostsHandler } from './handlers/record-costs.handler.ts';
import { admissionPostureHandler } from './handlers/admission-posture.handler.ts';
import { rotateKeyHandler } from './handlers/rotate-key.handler.ts';
import { openSecretHandler, sealSecretHandler } from './handlers/sealed-secret.handler.ts';
import { setPostureHandler } from './handlers/set-posture.handler.ts';
import { getTenantOverridesHandler, setTenantOverridesHandler } from './handlers/tenant-overrides.handler.ts';
import { recordTokenRotationHandler } from './handlers/token-rotation.handler.ts';
import { loadKeyEncryptionKey } from './secrets/key-encryption-key.ts';
import { TENANT_OVERRIDES_COLLECTION } from './store/overrides.repository.ts';
import { POSTURE_COLLECTION } from './store/posture.repository.ts';
import { createRepositories } from './store/repositories.ts';
import { openRevocationWriter } from './store/revocations.kv.ts';

/** Options of {@link defineGovernanceService}. */
export interface GovernanceServiceOptions {
  /** Epoch milliseconds now; @default Date.now (embedding code may pass its own clock). */
  readonly now?: () => number;
}

async function buildGovernance(
  context: ServiceContext<GovernanceConfig>,
  options: GovernanceServiceOptions,
): Promise<ServiceImplementation> {
  const { config, logger } = context;
  // Executors keep resolved configurations (the tenant's overrides among their layers) and which tiers admit every
  // call (from the posture): writes to either are announced.
  const changes = createConfigChangeAnnouncer(context.bus, 'governance');
  const kek = await loadKeyEncryptionKey(config, logger);
  logger.info({ kekId: kek.id, source: kek.source }, 'key-encryption key loaded');
  const ctx: GovernanceContext = {
    repos: await createRepositories(
      observeWrites(context.store, [TENANT_OVERRIDES_COLLECTION, POSTURE_COLLECTION], () => changes.announce()),
    ),
    publisher: context.publisher,
    revocations: await openRevocationWriter(context.bus),
    kek,
    // Validated by the config schema already.
    rates: parseCurrencyRates(config.GOVERNANCE_CURRENCY_RATES) ?? { USD: 1 },
    healthWindowMs: config.GOVERNANCE_PROVIDER_HEALTH_WINDOW_SECONDS * 1000,
    logger,
    now: options.now ?? Date.now,
  };
  // Receipts exist only to make a repeated record_cost a duplicate (a retry comes within seconds or minutes).
  const retentionMs = config.GOVERNANCE_COST_RECEIPT_RETENTION_HOURS * 3_600_000;
  const receiptPruner = startPeriodic(
    async () => {
      const deleted = await ctx.repos.spend.pruneReceipts(ctx.now() - retentionMs);
      if (deleted > 0) logger.info({ deleted }, 'expired cost receipts deleted');
    },
    {
      name: 'cost-receipt-pruner',
      intervalMs: config.GOVERNANCE_COST_RECEIPT_PRUNE_INTERVAL_SECONDS * 1000,
      logger,
      runAtStart: true,
    },
  );
  return {
    stop: async () => {
      changes.stop();
      await receiptPruner.stop();
    },
    // auth.rotate_token is completed by the gateway (it holds the signing
    // keys); its revocation and audit trail are _governance.record_token_rotation.
    handlers: {
      'governance.posture': governancePostureHandler(ctx),
      'llm.posture': llmPostureHandler(ctx),
      'governance.set_posture': setPostureHandler(ctx),
      'governance.get_tenant_overrides': getTenantOverridesHandler(ctx),
      'governance.set_tenant_overrides': setTenantOverridesHandler(ctx),
      'governance.rotate_key': rotateKeyHandler(ctx),
    },
    internalHandlers: [
      admitLlmCallHandler(ctx),
      recordCostHandler(ctx),
      recordCostsHandler(ctx),
      admissionPostureHandler(ctx),
      failoverHandler(ctx),
      effectiveOverridesHandler(ctx),
      providerKeyHandler(ctx),
      recordTokenRotationHandler(ctx),
      sealSecretHandler(ctx),
      openSecretHandler(ctx),
      tenantBudgetHandler(ctx),
    ],
  };
}

/**
 * The governance service: governance.*, governance.posture and llm.posture;
 * budgets, rate limits, tenant overrides and provider keys, and the internal
 * endpoints the run engine and the gateway call (declared in `@ars/contracts`).
 */
export function defineGovernanceService(options: GovernanceServiceOptions = {}) {
  return defineService({
    name: 'governance',
    version: '0.1.0',
    config: GovernanceConfig,
    build: (context) => buildGovernance(context, options),
  });
}

/** The governance service as `main.ts` runs it. */
export const governanceService = defineGovernanceService();
