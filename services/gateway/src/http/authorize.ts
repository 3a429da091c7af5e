import { SCOPES, ServiceError } from '@ars/contracts';
import type { MethodDef, VerifiedIdentity } from '@ars/contracts';

/**
 * The method-level claim gate at the edge: auth class `A` needs the verified
 * `admin` claim (else 403 `identity_scope_required`, the spec's code for an
 * admin verb), and a method's `requiredScope` (the per-user
 * `agent_config:user` tier, which admin does not satisfy) needs that claim
 * (else 403 `scope_mismatch`: a claim below what the surface needs, neither a
 * fan-in nor an admin verb). Owners check again; the edge never lets one through.
 */
export function authorizeMethod(
  method: Pick<MethodDef, 'name' | 'auth' | 'requiredScope'>,
  verified: VerifiedIdentity,
): void {
  if (method.auth.includes('A') && !verified.scopes.includes(SCOPES.admin)) {
    throw new ServiceError('identity_scope_required', `${method.name} needs the admin claim`);
  }
  const required = method.requiredScope;
  if (required !== undefined && !verified.scopes.includes(required)) {
    throw new ServiceError('scope_mismatch', `${method.name} needs the ${required} claim`);
  }
}
