import { SCOPES, ServiceError } from '@ars/contracts';
import type { IdentityQuad, IdentityScope, VerifiedIdentity } from '@ars/contracts';

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

/** Auth class A: the verified `admin` claim, else 403 `identity_scope_required` (console:fleet satisfies no mutation). */
export function requireAdmin(identity: VerifiedIdentity, method: string): void {
  if (!hasScope(identity, SCOPES.admin)) {
    throw new ServiceError('identity_scope_required', `${method} needs the admin claim`);
  }
}

/** A body identity naming anything but the verified tenant, user and session is 401 `identity_required`. */
export function requireOwnIdentity(
  verified: VerifiedIdentity,
  body: IdentityScope | undefined,
  method: string,
  components: readonly ('tenant' | 'user' | 'session')[] = ['tenant', 'user', 'session'],
): void {
  for (const component of components) {
    const value = body?.[component];
    if (value !== undefined && value !== verified[component]) {
      throw new ServiceError(
        'identity_required',
        `${method}: the body identity ${component} contradicts the verified identity`,
      );
    }
  }
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
  requireOwnIdentity(verified, body, method, ['user', 'session']);
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
