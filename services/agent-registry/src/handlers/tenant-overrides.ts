import { GOVERNANCE_EFFECTIVE_OVERRIDES, isServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { TenantOverrides } from '../domain/effective-config.ts';

/** The tenant layer's input: the overrides, or `available: false` when governance does not serve them. */
export interface TenantOverridesAnswer {
  readonly available: boolean;
  readonly overrides: TenantOverrides;
}

/** Reads a tenant's LLM overrides. */
export interface TenantOverridesSource {
  read(caller: VerifiedIdentity, tenant: string): Promise<TenantOverridesAnswer>;
}

/**
 * Asks governance `_governance.effective_overrides {tenant}` with the
 * caller's identity. Governance not running, or running without that
 * endpoint (no responders: `unavailable`) or answering `unimplemented`, is
 * tolerated: the layer is marked unavailable and applies nothing. A timeout
 * or a refusal is not: it fails the resolution (a run must not silently
 * escape its tenant's overrides because governance is slow).
 */
export function createTenantOverridesSource(rpc: RpcClient, logger: Logger, timeoutMs = 2_000): TenantOverridesSource {
  return {
    async read(caller, tenant) {
      try {
        const reply = await callInternal(rpc, GOVERNANCE_EFFECTIVE_OVERRIDES, caller, { tenant }, { timeoutMs });
        return { available: true, overrides: reply.overrides };
      } catch (error) {
        if (isServiceError(error) && (error.code === 'unavailable' || error.code === 'unimplemented')) {
          logger.warn({ tenant, code: error.code }, 'tenant overrides unavailable; layer skipped');
          return { available: false, overrides: {} };
        }
        throw error;
      }
    },
  };
}
