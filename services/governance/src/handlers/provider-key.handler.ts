import { ServiceError } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { openSecret } from '../domain/sealing.ts';
import { INTERNAL_ENDPOINTS, ProviderKeyRequest } from '../internal-api.ts';
import type { ProviderKeyResponse } from '../internal-api.ts';
import { requireCallerTenant } from './access.ts';
import type { GovernanceContext } from './context.ts';
import { parseInternalBody } from './internal-body.ts';

const ENDPOINT = INTERNAL_ENDPOINTS.providerKey;

/** `_governance.provider_key`: see {@link ProviderKeyRequest}. The key is never logged. */
export function providerKeyHandler(ctx: GovernanceContext): RpcHandler {
  return async ({ identity, body }): Promise<ProviderKeyResponse> => {
    const request = parseInternalBody(ProviderKeyRequest, ENDPOINT, body);
    requireCallerTenant(identity, request.tenant, ENDPOINT);
    const stored = await ctx.repos.keys.get(request.tenant, request.provider);
    if (stored === undefined) {
      throw new ServiceError('not_found', `no key is installed for provider "${request.provider}"`);
    }
    let key: string;
    try {
      key = openSecret(ctx.kek.key, stored.sealed, stored.tenant, stored.provider);
    } catch {
      ctx.logger.error(
        { tenant: stored.tenant, provider: stored.provider, sealedWith: stored.sealed.kek_id, kekId: ctx.kek.id },
        'provider key cannot be decrypted with the configured key-encryption key',
      );
      throw new ServiceError(
        'internal',
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
  };
}
