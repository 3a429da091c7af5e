import { foldTenantFanIn } from '@ars/auth';
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

function stringList(value: unknown): readonly string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined;
}

/**
 * The tenant fan-in of `tasks.list`, `pause.list`, `flows.list` and `flows.runs.list` at the edge: naming
 * `filter.tenant_ids` needs admin (403 `scope_mismatch` for another tenant,
 * 403 `identity_scope_required` for only one's own, see `foldTenantFanIn`).
 * Returns the tenants of a granted fan-in (for the audit event), or
 * `undefined` for a read of the caller's own session. The owner applies the
 * same fold to scope its query.
 */
export function checkListFanIn(
  method: Pick<MethodDef, 'name'>,
  verified: VerifiedIdentity,
  body: Record<string, unknown>,
): readonly string[] | undefined {
  if (!TENANT_FAN_IN_METHODS.has(method.name)) return undefined;
  const filter = body.filter;
  if (filter === null || typeof filter !== 'object') return undefined;
  return foldTenantFanIn(verified, stringList((filter as Record<string, unknown>).tenant_ids));
}
