import { GovernanceRotateKeyRequest } from '@ars/contracts';
import type { GovernanceRotateKeyResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { keyFingerprint } from '../domain/fingerprint.ts';
import { sealSecret } from '../domain/sealing.ts';
import { requireAdmin, requireOwnIdentity, typedMethod } from '@ars/service-kit';
import { actorOf } from './access.ts';
import type { GovernanceContext } from './context.ts';
import { publishEvents } from './events.ts';

const METHOD = 'governance.rotate_key';

/**
 * governance.rotate_key (M, A): installs or replaces the caller's tenant's key
 * for `provider`, sealed with AES-256-GCM at rest. The response, the log line
 * and `governance.key_rotated` carry only the fingerprint.
 */
export function rotateKeyHandler(ctx: GovernanceContext): RpcHandler {
  return typedMethod(
    GovernanceRotateKeyRequest,
    async ({ identity, body: request }): Promise<GovernanceRotateKeyResponse> => {
      requireAdmin(METHOD, identity);
      requireOwnIdentity(METHOD, identity, request.identity);
      const tenant = identity.tenant;
      const fingerprint = keyFingerprint(request.key);
      const sealed = sealSecret(ctx.kek.key, request.key, tenant, request.provider);
      const at = new Date(ctx.now()).toISOString();
      const actor = actorOf(identity);
      const { previous_fingerprint } = await ctx.repos.keys.put(
        { tenant, provider: request.provider, sealed, fingerprint },
        actor,
        at,
      );
      ctx.logger.info(
        { tenant, provider: request.provider, fingerprint, previous_fingerprint },
        'provider key rotated',
      );
      await publishEvents(ctx, actor, [
        {
          type: 'governance.key_rotated',
          payload: { Actor: actor, Provider: request.provider, Fingerprint: fingerprint, OccurredAt: at },
        },
      ]);
      return {
        provider: request.provider,
        fingerprint,
        rotated_at: at,
        ...(previous_fingerprint === undefined ? {} : { previous_fingerprint }),
      };
    },
  );
}
