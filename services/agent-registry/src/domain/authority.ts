import { SCOPES, ServiceError } from '@ars/contracts';
import type { IdentityScope, VerifiedIdentity } from '@ars/contracts';

/**
 * The per-user variant tier's gate: the verified `agent_config:user` claim,
 * else 403 `scope_mismatch` (a claim below what the tier needs; not a fan-in
 * nor an admin verb, which are `identity_scope_required`). `admin` does not
 * satisfy it.
 */
export function requireVariantClaim(method: string, verified: VerifiedIdentity): void {
  if (!verified.scopes.includes(SCOPES.agentConfigUser)) {
    throw new ServiceError(
      'scope_mismatch',
      `${method} needs the ${SCOPES.agentConfigUser} claim (admin does not satisfy it)`,
    );
  }
}

/**
 * The body identity component contradicting the verified one, if any (the
 * own-identity check (`requireOwnIdentity` of @ars/service-kit) as data, for callers that report it).
 */
export function contradictedComponent(
  verified: VerifiedIdentity,
  body: IdentityScope | undefined,
): 'tenant' | 'user' | 'session' | undefined {
  return (['tenant', 'user', 'session'] as const).find(
    (component) => body?.[component] !== undefined && body[component] !== verified[component],
  );
}
