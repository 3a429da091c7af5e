import { ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { canFanIn } from '@ars/auth';
import type { SessionTriple } from './session.ts';

/** The triple of a verified identity. */
export function verifiedTriple(verified: VerifiedIdentity): SessionTriple {
  return { tenant: verified.tenant, user: verified.user, session: verified.session };
}

/** Where a sessions.list read looks: tenants, and one user or (fan-in) every user. */
export interface ListScope {
  readonly tenants: readonly string[];
  /** `undefined`: every user of `tenants` (fan-in under the claim). */
  readonly user: string | undefined;
}

/**
 * The scope of sessions.list. Without `filter.tenant_ids` it is the
 * caller's (tenant, user). `tenant_ids` naming another tenant (or several)
 * needs admin or console:fleet, else 403 `scope_mismatch`; with the claim
 * the read fans in across every user of the named tenants. Naming only the
 * caller's own tenant without the claim is the own-data read.
 */
export function resolveListScope(verified: VerifiedIdentity, tenantIds: readonly string[] | undefined): ListScope {
  const own: ListScope = { tenants: [verified.tenant], user: verified.user };
  if (tenantIds === undefined || tenantIds.length === 0) return own;
  const tenants = [...new Set(tenantIds)];
  const fleet = canFanIn(verified.scopes, 'admin_or_fleet');
  if (!fleet) {
    if (tenants.length === 1 && tenants[0] === verified.tenant) return own;
    throw new ServiceError('scope_mismatch', 'filter.tenant_ids naming another tenant needs admin or console:fleet');
  }
  return { tenants, user: undefined };
}

/** True when two triples name the same session. */
export function sameTriple(a: SessionTriple, b: SessionTriple): boolean {
  return a.tenant === b.tenant && a.user === b.user && a.session === b.session;
}
