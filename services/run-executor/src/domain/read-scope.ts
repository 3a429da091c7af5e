import { TASK_STATUSES } from '@ars/contracts';
import type { SearchFilter, StatusCounts, TaskListFilter, TaskStatus, VerifiedIdentity } from '@ars/contracts';
import { foldSearchFilter, foldTenantFanIn } from '@ars/auth';

/**
 * Which tasks (or pauses) a read may see, before its own filters:
 * - `triple`: the caller's verified (tenant, user, session) — the session
 *   projection every ordinary read gets;
 * - `tenants`: every user and session of these tenants (admin fan-in, XA);
 * - `principals`: the folded isolation principals of a search.
 */
export type ReadScope =
  | { readonly kind: 'triple'; readonly tenant: string; readonly user: string; readonly session: string }
  | { readonly kind: 'tenants'; readonly tenants: readonly string[] }
  | {
      readonly kind: 'principals';
      readonly tenants: readonly string[];
      readonly users: readonly string[];
      /** `undefined`: every session in scope. */
      readonly sessions: readonly string[] | undefined;
    };

/**
 * The scope of `tasks.list` and `pause.list` (R, XA). Without `tenant_ids`
 * the read projects the caller's verified session (X-Service-Session).
 * `tenant_ids` fans in across those tenants, every user and session, and
 * needs `admin` (`console:fleet` is not consulted): naming another tenant
 * without it is 403 `scope_mismatch`; naming only one's own (which would
 * widen to the tenant's other users) is 403 `identity_scope_required`.
 */
export function listScope(caller: VerifiedIdentity, tenantIds: readonly string[] | undefined): ReadScope {
  const tenants = foldTenantFanIn(caller, tenantIds);
  if (tenants === undefined) {
    return { kind: 'triple', tenant: caller.tenant, user: caller.user, session: caller.session };
  }
  return { kind: 'tenants', tenants };
}

/**
 * The scope of `search.tasks` (R, X): the search folding rules of
 * `foldSearchFilter` (omitted tenant and user fold to the caller's own;
 * omitted sessions mean every session of the caller's; beyond that needs
 * admin or console:fleet, else 403 `scope_mismatch`).
 */
export function searchScope(caller: VerifiedIdentity, filter: SearchFilter | undefined): ReadScope {
  const folded = foldSearchFilter({
    verified: caller,
    ...(filter?.tenant_ids === undefined ? {} : { tenant_ids: filter.tenant_ids }),
    ...(filter?.user_ids === undefined ? {} : { user_ids: filter.user_ids }),
    ...(filter?.session_ids === undefined ? {} : { session_ids: filter.session_ids }),
  });
  return { kind: 'principals', tenants: folded.tenant_ids, users: folded.user_ids, sessions: folded.session_ids };
}

/** A store filter on tenant, user and session fields (records of tasks and pauses share them). */
export function scopeFilter(scope: ReadScope): Record<string, unknown> {
  switch (scope.kind) {
    case 'triple':
      return { tenant: scope.tenant, user: scope.user, session: scope.session };
    case 'tenants':
      return { tenant: { $in: scope.tenants } };
    case 'principals':
      return {
        tenant: { $in: scope.tenants },
        user: { $in: scope.users },
        ...(scope.sessions === undefined ? {} : { session: { $in: scope.sessions } }),
      };
  }
}

/** Escapes a free-text query for use as a literal regular expression. */
export function literalPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The task filters shared by tasks.list and search.tasks. */
export interface TaskFilterInput {
  readonly status?: readonly TaskStatus[] | undefined;
  readonly kind?: readonly string[] | undefined;
  readonly parent_task_id?: string | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  /** Free text, matched case-insensitively as a literal against `query` and `goal`. */
  readonly text?: string | undefined;
}

/** Instants compare as ISO 8601 UTC strings: normalise any offset to `Z` first. */
function isoUtc(instant: string): string {
  return new Date(instant).toISOString();
}

/**
 * The store filter of a task read: the scope, then each given filter
 * (status and kind as sets, the time window on `created_at` with an
 * inclusive start and an exclusive end, free text over query and goal).
 */
export function taskFilter(scope: ReadScope, input: TaskFilterInput): Record<string, unknown> {
  const created: Record<string, string> = {};
  if (input.since !== undefined) created.$gte = isoUtc(input.since);
  if (input.until !== undefined) created.$lt = isoUtc(input.until);
  const pattern = input.text === undefined ? undefined : literalPattern(input.text);
  return {
    ...scopeFilter(scope),
    ...(input.status === undefined ? {} : { status: { $in: [...input.status] } }),
    ...(input.kind === undefined ? {} : { kind: { $in: [...input.kind] } }),
    ...(input.parent_task_id === undefined ? {} : { parent_task_id: input.parent_task_id }),
    ...(Object.keys(created).length === 0 ? {} : { created_at: created }),
    ...(pattern === undefined
      ? {}
      : {
          $or: [{ query: { $regex: pattern, $options: 'i' } }, { goal: { $regex: pattern, $options: 'i' } }],
        }),
  };
}

/** True when `input` narrows the scope with a condition the list indexes do not settle (anything but the scope). */
export function narrowsScope(input: TaskFilterInput): boolean {
  return Object.values(input).some((value) => value !== undefined);
}

/** The tasks.list filter of a request, without `tenant_ids` (the scope's business). */
export function listFilterInput(filter: TaskListFilter | undefined): TaskFilterInput {
  return {
    status: filter?.status,
    kind: filter?.kind,
    parent_task_id: filter?.parent_task_id,
    since: filter?.since,
    until: filter?.until,
    text: filter?.text,
  };
}

/** Per-status counters with every status present. */
export function statusCounts(counts: Partial<Record<TaskStatus, number>>): StatusCounts {
  return Object.fromEntries(TASK_STATUSES.map((s) => [s, counts[s] ?? 0])) as StatusCounts;
}
