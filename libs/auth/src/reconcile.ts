import { ServiceError } from '@ars/contracts';
import type { IdentityScope, MethodDef, VerifiedIdentity } from '@ars/contracts';
import { canFanIn } from './scopes.ts';

/** The identity components the token verifies and a body may contradict. */
export const IDENTITY_COMPONENTS = ['tenant', 'user', 'session'] as const;

/** One of {@link IDENTITY_COMPONENTS}. */
export type IdentityComponent = (typeof IDENTITY_COMPONENTS)[number];

/** The registry members reconciliation reads. */
export type ReconcileMethod = Pick<MethodDef, 'name' | 'crossing' | 'ownIdentityOnly'>;

/** The body identity after the gate: a full triple plus the untouched `run` and `scope`. */
export interface ReconciledIdentity {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly run?: string;
  readonly scope?: string;
}

/** Result of {@link reconcileBodyIdentity}. */
export interface Reconciliation {
  readonly identity: ReconciledIdentity;
  /**
   * Components the body made differ under a granted claim, in triple order.
   * The gateway publishes `audit.admin_scope_used` for each.
   */
  readonly crossed: readonly IdentityComponent[];
}

/** Inputs of {@link reconcileBodyIdentity}. */
export interface ReconcileInput {
  readonly verified: VerifiedIdentity;
  /** The request's `identity` member; absent behaves as `{}`. */
  readonly body: IdentityScope | undefined;
  readonly method: ReconcileMethod;
}

function refuseCrossing(method: ReconcileMethod, component: IdentityComponent): ServiceError {
  if (method.crossing?.refusal === 'not_found') {
    // Indistinguishable from a missing resource: say nothing about the claim.
    return new ServiceError('not_found', `${method.name}: not found`);
  }
  if (component === 'tenant') {
    return new ServiceError('scope_mismatch', `${method.name}: naming another tenant needs a claim the token lacks`);
  }
  return new ServiceError(
    'identity_scope_required',
    `${method.name}: naming another ${component} needs admin or console:fleet`,
  );
}

/**
 * The shared gate between the verified identity and the body `identity`.
 *
 * - Absent members (and an absent or `{}` body) are backfilled from the verified identity.
 * - `run` and `scope` are independent of the token and survive untouched.
 * - A differing component the method cannot cross (no `crossing` entry for
 *   it, or `ownIdentityOnly`) is 401 `identity_required`.
 * - A crossable component differing without the claim is refused: 404
 *   `not_found` when `crossing.refusal` says so, otherwise 403
 *   `scope_mismatch` on the tenant axis and 403 `identity_scope_required` on
 *   the user and session axes. `never` is refused for every caller.
 *
 * All components are checked for 401 before any is checked for 403/404: a
 * body contradicting the identity outright is reported as unknown identity
 * even when another component would also lack a claim.
 */
export function reconcileBodyIdentity({ verified, body, method }: ReconcileInput): Reconciliation {
  const differing = IDENTITY_COMPONENTS.filter((c) => body?.[c] !== undefined && body[c] !== verified[c]);
  for (const component of differing) {
    if (method.ownIdentityOnly === true || method.crossing?.[component] === undefined) {
      throw new ServiceError(
        'identity_required',
        `${method.name}: the body identity ${component} contradicts the verified identity`,
      );
    }
  }
  for (const component of differing) {
    const claim = method.crossing?.[component] ?? 'never';
    if (!canFanIn(verified.scopes, claim)) throw refuseCrossing(method, component);
  }
  const identity: ReconciledIdentity = {
    tenant: body?.tenant ?? verified.tenant,
    user: body?.user ?? verified.user,
    session: body?.session ?? verified.session,
    ...(body?.run === undefined ? {} : { run: body.run }),
    ...(body?.scope === undefined ? {} : { scope: body.scope }),
  };
  return { identity: Object.freeze(identity), crossed: Object.freeze(differing) };
}
