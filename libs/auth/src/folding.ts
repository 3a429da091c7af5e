import { ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { canFanIn, isAdmin } from './scopes.ts';

/** Inputs of {@link foldIsolationFilter}: the caller and the principals the request names. */
export interface IsolationFilterInput {
  readonly verified: VerifiedIdentity;
  /** The tenant named by the request; omitted means the caller's. */
  readonly tenant?: string;
  /** The user named by the request: an isolation principal. */
  readonly user?: string;
  /** The session named by the request: a filter only. */
  readonly session?: string;
}

/** The effective scope of an artifacts.list or events.list read. */
export interface IsolationFilter {
  readonly tenant: string;
  /** `undefined`: every user of the tenant (only with admin or console:fleet). */
  readonly user: string | undefined;
  /** `undefined`: every session in scope. */
  readonly session: string | undefined;
  /** True when the scope reaches beyond the caller's own tenant and user under a claim. */
  readonly crossed: boolean;
}

/**
 * Folding for `artifacts.list` and the `events.list` filter.
 * - `user` omitted folds to the caller's own user; with admin or
 *   console:fleet it fans across the tenant (`user: undefined`).
 * - `user` naming another user needs admin or console:fleet, else 403
 *   `identity_scope_required`; with the claim that user is read.
 * - `tenant` naming another tenant needs the same claim, else 403 `scope_mismatch`.
 * - `session` is a filter: omitted gives all sessions in scope, naming one narrows; no claim.
 */
export function foldIsolationFilter({ verified, tenant, user, session }: IsolationFilterInput): IsolationFilter {
  const fleet = canFanIn(verified.scopes, 'admin_or_fleet');
  const effectiveTenant = tenant ?? verified.tenant;
  if (effectiveTenant !== verified.tenant && !fleet) {
    throw new ServiceError('scope_mismatch', 'reading another tenant needs admin or console:fleet');
  }
  if (user !== undefined && user !== verified.user && !fleet) {
    throw new ServiceError('identity_scope_required', 'reading another user needs admin or console:fleet');
  }
  const effectiveUser = user ?? (fleet ? undefined : verified.user);
  const crossed = effectiveTenant !== verified.tenant || effectiveUser !== verified.user;
  return Object.freeze({ tenant: effectiveTenant, user: effectiveUser, session, crossed });
}

/** Inputs of {@link foldSearchFilter}: the caller and the `filter` members of a SearchRequest. */
export interface SearchFilterInput {
  readonly verified: VerifiedIdentity;
  readonly tenant_ids?: readonly string[];
  readonly user_ids?: readonly string[];
  readonly session_ids?: readonly string[];
}

/** The effective filter of a search.* call. */
export interface SearchFilter {
  readonly tenant_ids: readonly string[];
  readonly user_ids: readonly string[];
  /** `undefined`: every session in scope. */
  readonly session_ids: readonly string[] | undefined;
  /** True when any axis went beyond the caller's own data under a claim. */
  readonly crossed: boolean;
}

function distinct(values: readonly string[] | undefined): readonly string[] | undefined {
  return values === undefined || values.length === 0 ? undefined : [...new Set(values)];
}

function foldPrincipal(
  named: readonly string[] | undefined,
  own: string,
): { ids: readonly string[]; crosses: boolean } {
  const ids = distinct(named) ?? [own];
  return { ids, crosses: ids.length > 1 || ids[0] !== own };
}

/**
 * Folding for `search.*`.
 * - `tenant_ids` and `user_ids` are isolation principals: omitted (or
 *   empty) they fold to the caller's tenant and user; naming another's, or
 *   more than one, needs admin or console:fleet, else 403 `scope_mismatch`.
 * - `session_ids` is a filter: omitted means all sessions in scope; one value
 *   needs no claim; more than one needs the claim (else 403 `scope_mismatch`).
 * Duplicate ids collapse before counting.
 */
export function foldSearchFilter(input: SearchFilterInput): SearchFilter {
  const { verified } = input;
  const tenants = foldPrincipal(input.tenant_ids, verified.tenant);
  const users = foldPrincipal(input.user_ids, verified.user);
  const sessionIds = distinct(input.session_ids);
  const sessionsCross = sessionIds !== undefined && sessionIds.length > 1;
  const crossed = tenants.crosses || users.crosses || sessionsCross;
  if (crossed && !canFanIn(verified.scopes, 'admin_or_fleet')) {
    const axis = tenants.crosses ? 'tenant_ids' : users.crosses ? 'user_ids' : 'session_ids';
    throw new ServiceError('scope_mismatch', `filter.${axis} beyond the caller's own needs admin or console:fleet`);
  }
  return Object.freeze({ tenant_ids: tenants.ids, user_ids: users.ids, session_ids: sessionIds, crossed });
}

/**
 * Folding for `filter.tenant_ids` of the XA list reads (`tasks.list`,
 * `pause.list`). Omitted (or empty), the read projects the caller's own
 * session and this answers `undefined`. Named, the read fans in across every
 * user and session of those tenants, which needs `admin` (`console:fleet` is
 * not consulted): naming another tenant without it is 403 `scope_mismatch`;
 * naming only one's own (still a fan-in across the tenant's other users) is
 * 403 `identity_scope_required`. Answers the distinct tenants named.
 */
export function foldTenantFanIn(
  verified: VerifiedIdentity,
  tenantIds: readonly string[] | undefined,
): readonly string[] | undefined {
  const tenants = distinct(tenantIds);
  if (tenants === undefined || isAdmin(verified.scopes)) return tenants;
  if (tenants.some((tenant) => tenant !== verified.tenant)) {
    throw new ServiceError('scope_mismatch', "filter.tenant_ids beyond the caller's tenant needs admin");
  }
  throw new ServiceError('identity_scope_required', 'filter.tenant_ids fans in across users and needs admin');
}

/** Inputs of {@link foldTenantList}: the caller and the tenant members of a tenant-level X list read's `filter`. */
export interface TenantListInput {
  readonly verified: VerifiedIdentity;
  /** The tenants named; omitted (or empty) means the caller's. */
  readonly tenant_ids?: readonly string[] | undefined;
  /** True: every tenant (the fleet view, for a caller who cannot know the tenants in advance). */
  readonly all_tenants?: boolean | undefined;
}

/** The tenants a tenant-level X list read covers. */
export type TenantList =
  | {
      readonly kind: 'tenants';
      /** Distinct, in the order first named; the caller's own when none was named. */
      readonly tenants: readonly string[];
      /** True when the list reaches beyond the caller's own tenant (under a claim). */
      readonly crossed: boolean;
    }
  | { readonly kind: 'all'; readonly crossed: true };

/**
 * Folding for the tenant-level X list reads (`agents.list`): the resource
 * belongs to a tenant, not to a user, so the caller's own tenant is its own
 * data. `filter.tenant_ids` omitted (or empty, or naming only the caller's
 * tenant) reads the caller's tenant with no claim; naming another tenant,
 * or more than one, needs admin or console:fleet, else 403 `scope_mismatch`.
 * `filter.all_tenants: true` reads every tenant and needs the same claim;
 * with `tenant_ids` as well it is 400 `invalid_request` (checked after the
 * claim, so a caller without it learns nothing more). Duplicate ids collapse.
 */
export function foldTenantList(input: TenantListInput): TenantList {
  const { verified } = input;
  const fleet = canFanIn(verified.scopes, 'admin_or_fleet');
  if (input.all_tenants === true) {
    if (!fleet) throw new ServiceError('scope_mismatch', 'filter.all_tenants needs admin or console:fleet');
    if (distinct(input.tenant_ids) !== undefined) {
      throw new ServiceError('invalid_request', 'filter: all_tenants and tenant_ids exclude each other');
    }
    return Object.freeze({ kind: 'all', crossed: true });
  }
  const tenants = foldPrincipal(input.tenant_ids, verified.tenant);
  if (tenants.crosses && !fleet) {
    throw new ServiceError(
      'scope_mismatch',
      "filter.tenant_ids beyond the caller's tenant needs admin or console:fleet",
    );
  }
  return Object.freeze({ kind: 'tenants', tenants: tenants.ids, crossed: tenants.crosses });
}
