import { SCOPES, ServiceError } from '@ars/contracts';
import type { MethodDef, VerifiedIdentity } from '@ars/contracts';

/**
 * The method-level claim gate at the edge: auth class `A` needs the verified
 * `admin` claim, and a method's `requiredScope` (the per-user
 * `agent_config:user` tier, which admin does not satisfy) needs that claim.
 * Either refusal is 403 `identity_scope_required`: the identity is known and
 * insufficient. Owners may check again; the edge never lets one through.
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
    throw new ServiceError('identity_scope_required', `${method.name} needs the ${required} claim`);
  }
}
