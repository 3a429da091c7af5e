import { SCOPES, ServiceError } from '@ars/contracts';
import type { IdentityQuad, IdentityScope, VerifiedIdentity } from '@ars/contracts';
import { requireOwnIdentity } from '@ars/service-kit';

/**
 * The service's own authority checks. The gateway enforces the same rules
 * first (claims, body identity reconciliation); these keep a direct NATS
 * caller to them as well.
 */

const hasScope = (identity: VerifiedIdentity, scope: string) => identity.scopes.includes(scope);

/** The verified caller as an event's `Actor` quad (no run). */
export function actorOf(identity: VerifiedIdentity): IdentityQuad {
  return { tenant: identity.tenant, user: identity.user, session: identity.session, run: '' };
}

/** The tenant a posture read targets, and whether it is another tenant's. */
export interface PostureTarget {
  readonly tenant: string;
  readonly crossed: boolean;
}

/**
 * The posture reads (R, X): the body identity's tenant, default the caller's;
 * another tenant needs `admin` or `console:fleet`, else 403 `scope_mismatch`.
 * User and session must be the caller's own.
 */
export function postureTarget(
  verified: VerifiedIdentity,
  body: IdentityScope | undefined,
  method: string,
): PostureTarget {
  requireOwnIdentity(method, verified, body, ['user', 'session']);
  const tenant = body?.tenant ?? verified.tenant;
  if (tenant === verified.tenant) return { tenant, crossed: false };
  if (!hasScope(verified, SCOPES.admin) && !hasScope(verified, SCOPES.consoleFleet)) {
    throw new ServiceError('scope_mismatch', `${method}: naming another tenant needs admin or console:fleet`);
  }
  return { tenant, crossed: true };
}

/** An internal call's body tenant must be the calling identity's: 403 `scope_mismatch` otherwise. */
export function requireCallerTenant(verified: VerifiedIdentity, tenant: string, endpoint: string): void {
  if (tenant !== verified.tenant) {
    throw new ServiceError('scope_mismatch', `${endpoint}: the body tenant is not the calling identity's tenant`);
  }
}
