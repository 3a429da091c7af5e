import { STEERING_TIERS, ServiceError } from '@ars/contracts';
import type { SteeringTier, VerifiedIdentity } from '@ars/contracts';
import { isAdmin } from './scopes.ts';

/** The owner of a run: the verified tenant and user that started it. */
export interface RunOwner {
  readonly tenant: string;
  readonly user: string;
}

/** The caller members steering reads; the body `scope` member is never among them. */
export type SteeringCaller = Pick<VerifiedIdentity, 'tenant' | 'user' | 'scopes'>;

/** Position of a tier in the order session_user < owner_user < admin. */
export function steeringTierRank(tier: SteeringTier): number {
  return STEERING_TIERS.indexOf(tier);
}

/**
 * The caller's steering authority over a run, derived from the verified
 * token only (the body `scope` is ignored):
 * - the `admin` claim gives `admin`, in any tenant;
 * - owning the run (same tenant and same user) gives `owner_user`;
 * - otherwise `undefined`: no authority (a different user of the same
 *   tenant, and any caller of another tenant without admin).
 *
 * No caller is ever derived `session_user`: that tier exists only as a
 * method minimum, which `owner_user` satisfies.
 */
export function deriveSteeringTier(caller: SteeringCaller, owner: RunOwner): SteeringTier | undefined {
  if (isAdmin(caller.scopes)) return 'admin';
  if (caller.tenant === owner.tenant && caller.user === owner.user) return 'owner_user';
  return undefined;
}

/**
 * Refuses a steering control whose minimum tier the caller does not reach,
 * with 403 `scope_mismatch`. Cross-tenant steering needs `admin` whatever
 * the minimum.
 *
 * @returns the caller's derived tier.
 */
export function assertSteeringAllowed(caller: SteeringCaller, owner: RunOwner, minimum: SteeringTier): SteeringTier {
  const tier = deriveSteeringTier(caller, owner);
  if (caller.tenant !== owner.tenant && tier !== 'admin') {
    throw new ServiceError('scope_mismatch', 'cross-tenant steering requires admin');
  }
  if (tier === undefined) throw new ServiceError('scope_mismatch', 'no steering authority over this run');
  if (steeringTierRank(tier) < steeringTierRank(minimum)) {
    throw new ServiceError('scope_mismatch', `steering needs ${minimum}; the caller has ${tier}`);
  }
  return tier;
}
