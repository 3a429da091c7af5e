import { IDENTITY_COMPONENTS, isAdmin, reconcileBodyIdentity } from '@ars/auth';
import type { IdentityComponent, ReconciledIdentity } from '@ars/auth';
import { getMethod, ServiceError } from '@ars/contracts';
import type { IdentityScope, VerifiedIdentity } from '@ars/contracts';

/**
 * The owners' own authority checks, one of each. The gateway applies the
 * same rules first, from the registry; an owner checks again because a NATS
 * caller can reach it directly. Authority always comes from `verified`,
 * never from the body.
 */

/** Auth class A: the verified `admin` claim, else 403 `identity_scope_required` (console:fleet satisfies none). */
export function requireAdmin(method: string, verified: VerifiedIdentity): void {
  if (!isAdmin(verified.scopes)) throw new ServiceError('identity_scope_required', `${method} needs the admin claim`);
}

/**
 * A body identity naming anything but the verified identity (on `components`,
 * default all three) is 401 `identity_required`: for methods that cross no
 * identity (sessions.delete, the agent_config setters, governance writes).
 */
export function requireOwnIdentity(
  method: string,
  verified: VerifiedIdentity,
  body: IdentityScope | undefined,
  components: readonly IdentityComponent[] = IDENTITY_COMPONENTS,
): void {
  for (const component of components) {
    const named = body?.[component];
    if (named !== undefined && named !== verified[component]) {
      throw new ServiceError('identity_required', `${method}: the body identity ${component} contradicts the verified identity`);
    }
  }
}

/** The target identity of a registry method: the body identity reconciled under the method's crossing rules. */
export function reconcileIdentity(
  methodName: string,
  verified: VerifiedIdentity,
  body: IdentityScope | undefined,
): ReconciledIdentity {
  const method = getMethod(methodName);
  if (method === undefined) throw new ServiceError('internal', `${methodName} is not in the method registry`);
  return reconcileBodyIdentity({ verified, body, method }).identity;
}
