import { GOVERNANCE_OPEN_SECRET, GOVERNANCE_SEAL_SECRET, refuse } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { openBound, sealBound } from '../domain/sealing.ts';
import { requireCallerTenant } from './access.ts';
import type { GovernanceContext } from './context.ts';

/**
 * `_governance.seal_secret` and `_governance.open_secret`: governance seals
 * and opens secrets other services keep (agent-registry's OAuth grants), so
 * that the key-encryption key never leaves governance. A record is bound to
 * (tenant, purpose, context); the tenant must be the caller's. Neither the
 * secret nor the sealed parts are logged.
 */

/** `_governance.seal_secret`: see `GovernanceSealSecretRequest` of `@ars/contracts`. */
export function sealSecretHandler(ctx: GovernanceContext): InternalHandler {
  return serveInternal(GOVERNANCE_SEAL_SECRET, async ({ identity, body }) => {
    requireCallerTenant(identity, body.tenant, GOVERNANCE_SEAL_SECRET.name);
    return { sealed: sealBound(ctx.kek.key, body.secret, [body.tenant, body.purpose, body.context]) };
  });
}

/** `_governance.open_secret`: see `GovernanceOpenSecretRequest` of `@ars/contracts`. */
export function openSecretHandler(ctx: GovernanceContext): InternalHandler {
  return serveInternal(GOVERNANCE_OPEN_SECRET, async ({ identity, body }) => {
    requireCallerTenant(identity, body.tenant, GOVERNANCE_OPEN_SECRET.name);
    try {
      return { secret: openBound(ctx.kek.key, body.sealed, [body.tenant, body.purpose, body.context]) };
    } catch {
      ctx.logger.warn(
        { tenant: body.tenant, purpose: body.purpose, sealedWith: body.sealed.kek_id, kekId: ctx.kek.id },
        'sealed secret does not open',
      );
      throw refuse(
        GOVERNANCE_OPEN_SECRET,
        'unreadable',
        'the sealed record does not open for this tenant, purpose and context with the configured key-encryption key',
      );
    }
  });
}
