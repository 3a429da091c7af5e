import { SCOPES, ServiceError } from '@ars/contracts';
import type { IdentityScope, VerifiedIdentity } from '@ars/contracts';

/**
 * The admin tier's gate: the verified identity must carry `admin`, else 403
 * `identity_scope_required` (the errors table's "admin verbs"). The gateway
 * checks the same at the edge; a direct NATS caller meets it here.
 */
export function requireAdmin(method: string, verified: VerifiedIdentity): void {
  if (!verified.scopes.includes(SCOPES.admin)) {
    throw new ServiceError('identity_scope_required', `${method} needs the admin claim`);
  }
}

/**
 * The body `identity` is input, not authority: none of the agent_config
 * methods crosses identities, so a member contradicting the verified one is
 * 401 `identity_required` (as the gateway's reconciliation answers).
 */
export function checkBodyIdentity(method: string, verified: VerifiedIdentity, body: IdentityScope | undefined): void {
  for (const component of ['tenant', 'user', 'session'] as const) {
    const named = body?.[component];
    if (named !== undefined && named !== verified[component]) {
      throw new ServiceError(
        'identity_required',
        `${method}: the body identity ${component} contradicts the verified identity`,
      );
    }
  }
}

/**
 * The per-user variant tier's gate: the verified `agent_config:user` claim,
 * else 403 `identity_scope_required`. `admin` does not satisfy it.
 */
export function requireVariantClaim(method: string, verified: VerifiedIdentity): void {
  if (!verified.scopes.includes(SCOPES.agentConfigUser)) {
    throw new ServiceError(
      'identity_scope_required',
      `${method} needs the ${SCOPES.agentConfigUser} claim (admin does not satisfy it)`,
    );
  }
}

/**
 * The body identity component contradicting the verified one, if any (the
 * check of {@link checkBodyIdentity} as data, for callers that report it).
 */
export function contradictedComponent(
  verified: VerifiedIdentity,
  body: IdentityScope | undefined,
): 'tenant' | 'user' | 'session' | undefined {
  return (['tenant', 'user', 'session'] as const).find(
    (component) => body?.[component] !== undefined && body[component] !== verified[component],
  );
}
