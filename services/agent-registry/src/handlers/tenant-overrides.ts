import { GOVERNANCE_EFFECTIVE_OVERRIDES, isServiceError, ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { callInternalWithinBudget } from '@ars/bus';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { TenantOverrides } from '../domain/effective-config.ts';

/** Reads a tenant's LLM overrides. */
export interface TenantOverridesSource {
  read(caller: VerifiedIdentity, tenant: string): Promise<TenantOverrides>;
}

/**
 * How long a read waits for governance, asks again of one with no
 * responders included, in ms: under the run engine's 2 s
 * (`ENGINE_RPC_TIMEOUT_MS`), so the engine hears this service's 503 rather
 * than a timeout of its own.
 */
export const TENANT_OVERRIDES_TIMEOUT_MS = 1_500;

/**
 * Asks governance `_governance.effective_overrides {tenant}` with the
 * caller's identity. Fails closed: a run never runs without the
 * restrictions its tenant's operator set. Governance with no responders
 * (restarting, not running, its subscriptions still propagating after a
 * NATS node failover) is asked again within the budget, then the read
 * throws 503 `unavailable` (retryable: the engine retries the run); one
 * that does not serve the endpoint (`unimplemented`) is `unavailable` too.
 * A timeout or a refusal is thrown as it is.
 */
export function createTenantOverridesSource(
  rpc: RpcClient,
  logger: Logger,
  timeoutMs = TENANT_OVERRIDES_TIMEOUT_MS,
): TenantOverridesSource {
  return {
    async read(caller, tenant) {
      try {
        const reply = await callInternalWithinBudget(rpc, GOVERNANCE_EFFECTIVE_OVERRIDES, caller, { tenant }, { timeoutMs });
        return reply.overrides;
      } catch (error) {
        if (!isServiceError(error) || (error.code !== 'unavailable' && error.code !== 'unimplemented')) throw error;
        logger.warn({ tenant, code: error.code }, 'tenant overrides unavailable; the configuration is not resolved');
        throw new ServiceError('unavailable', `governance did not answer ${GOVERNANCE_EFFECTIVE_OVERRIDES.name}`, {
          cause: error,
        });
      }
    },
  };
}
