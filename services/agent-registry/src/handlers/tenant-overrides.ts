import { z } from 'zod';
import { isServiceError, ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { TenantOverrides } from '../domain/effective-config.ts';

/** Governance's internal endpoint answering a tenant's LLM overrides. */
export const GOVERNANCE_EFFECTIVE_OVERRIDES = {
  service: 'governance',
  endpoint: '_governance.effective_overrides',
} as const;

/** The tenant layer's input: the overrides, or `available: false` when governance does not serve them. */
export interface TenantOverridesAnswer {
  readonly available: boolean;
  readonly overrides: TenantOverrides;
}

/** Reads a tenant's LLM overrides. */
export interface TenantOverridesSource {
  read(caller: VerifiedIdentity, tenant: string): Promise<TenantOverridesAnswer>;
}

const Reply = z.looseObject({
  overrides: z.looseObject({
    model: z.string().optional(),
    temperature: z.number().optional(),
    max_tokens: z.int().optional(),
    reasoning_effort: z.string().optional(),
    extra_instructions: z.string().optional(),
  }),
});

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
      const { service, endpoint } = GOVERNANCE_EFFECTIVE_OVERRIDES;
      let reply: unknown;
      try {
        reply = await rpc.call(service, endpoint, caller, { tenant }, { timeoutMs });
      } catch (error) {
        if (isServiceError(error) && (error.code === 'unavailable' || error.code === 'unimplemented')) {
          logger.warn({ tenant, code: error.code }, 'tenant overrides unavailable; layer skipped');
          return { available: false, overrides: {} };
        }
        throw error;
      }
      const parsed = Reply.safeParse(reply);
      if (!parsed.success) throw new ServiceError('internal', `malformed ${endpoint} answer`);
      return { available: true, overrides: parsed.data.overrides };
    },
  };
}
