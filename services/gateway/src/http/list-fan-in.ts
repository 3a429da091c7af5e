import { foldTenantFanIn, foldTenantList } from '@ars/auth';
import type { MethodDef, VerifiedIdentity } from '@ars/contracts';

/**
 * The XA list reads whose `filter.tenant_ids` fans in across every user and
 * session of the tenants it names (admin only; `console:fleet` is not
 * consulted).
 */
const TENANT_FAN_IN_METHODS: ReadonlySet<string> = new Set([
  'tasks.list',
  'pause.list',
  'flows.list',
  'flows.runs.list',
]);

/**
 * The X list reads of a tenant-level resource whose `filter.tenant_ids` or
 * `filter.all_tenants` fans in across tenants (admin or console:fleet).
 */
const TENANT_LIST_METHODS: ReadonlySet<string> = new Set(['agents.list']);

/** A granted tenant fan-in of a list read, for its audit event. */
export interface ListFanIn {
  /** The tenants reached; `'*'`: every tenant (`filter.all_tenants`). */
  readonly tenants: readonly string[] | '*';
  /** The filter member that crossed. */
  readonly axis: 'tenant_ids' | 'all_tenants';
}

function stringList(value: unknown): readonly string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined;
}

/**
 * The tenant fan-in of the list reads at the edge. For `tasks.list`,
 * `pause.list`, `flows.list` and `flows.runs.list` (XA), naming
 * `filter.tenant_ids` needs admin (403 `scope_mismatch` for another tenant,
 * 403 `identity_scope_required` for only one's own, see `foldTenantFanIn`).
 * For `agents.list` (X), naming another tenant or more than one, or
 * `filter.all_tenants: true`, needs admin or console:fleet (403
 * `scope_mismatch`, see `foldTenantList`). Returns the granted fan-in (for
 * the audit event), or `undefined` for a read of the caller's own data. The
 * owner applies the same fold to scope its query.
 */
export function checkListFanIn(
  method: Pick<MethodDef, 'name'>,
  verified: VerifiedIdentity,
  body: Record<string, unknown>,
): ListFanIn | undefined {
  const filter = body.filter;
  if (filter === null || typeof filter !== 'object') return undefined;
  const named = filter as Record<string, unknown>;
  if (TENANT_FAN_IN_METHODS.has(method.name)) {
    const tenants = foldTenantFanIn(verified, stringList(named.tenant_ids));
    return tenants === undefined ? undefined : { tenants, axis: 'tenant_ids' };
  }
  if (!TENANT_LIST_METHODS.has(method.name)) return undefined;
  const folded = foldTenantList({
    verified,
    tenant_ids: stringList(named.tenant_ids),
    all_tenants: named.all_tenants === true,
  });
  if (folded.kind === 'all') return { tenants: '*', axis: 'all_tenants' };
  return folded.crossed ? { tenants: folded.tenants, axis: 'tenant_ids' } : undefined;
}
