import { GOVERNANCE_PROVIDER_KEY, refuse } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { openSecret } from '../domain/sealing.ts';
import { requireCallerTenant } from './access.ts';
import type { GovernanceContext } from './context.ts';

const ENDPOINT = GOVERNANCE_PROVIDER_KEY;

/** `_governance.provider_key`: see `GovernanceProviderKeyRequest` of `@ars/contracts`. The key is never logged. */
export function providerKeyHandler(ctx: GovernanceContext): InternalHandler {
  return serveInternal(ENDPOINT, async ({ identity, body: request }) => {
    requireCallerTenant(identity, request.tenant, ENDPOINT.name);
    const stored = await ctx.repos.keys.get(request.tenant, request.provider);
    if (stored === undefined) {
      throw refuse(ENDPOINT, 'no_key', `no key is installed for provider "${request.provider}"`);
    }
    let key: string;
    try {
      key = openSecret(ctx.kek.key, stored.sealed, stored.tenant, stored.provider);
    } catch {
      ctx.logger.error(
        { tenant: stored.tenant, provider: stored.provider, sealedWith: stored.sealed.kek_id, kekId: ctx.kek.id },
        'provider key cannot be decrypted with the configured key-encryption key',
      );
      throw refuse(
        ENDPOINT,
        'key_unreadable',
        `the key of provider "${request.provider}" cannot be decrypted with the configured key-encryption key; rotate it again`,
      );
    }
    return {
      tenant: stored.tenant,
      provider: stored.provider,
      key,
      fingerprint: stored.fingerprint,
      rotated_at: stored.rotated_at,
    };
  });
}
