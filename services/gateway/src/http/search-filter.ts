import { foldSearchFilter } from '@ars/auth';
import type { MethodDef, VerifiedIdentity } from '@ars/contracts';

/** The filter axes of search.* that are isolation principals or multi-value filters. */
const AXES = ['tenant_ids', 'user_ids', 'session_ids'] as const;

function stringList(value: unknown): readonly string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined;
}

/** A granted search crossing: the folded filter the audit event names. */
export interface SearchCrossing {
  readonly tenant_ids: readonly string[];
  readonly user_ids: readonly string[];
  readonly session_ids: readonly string[] | undefined;
  /** The axes that went beyond the caller's own data. */
  readonly axes: readonly string[];
}

/**
 * The search.* folding rules at the edge: naming another tenant or user, or
 * more than one of either, or more than one session, needs admin or
 * console:fleet (403 `scope_mismatch` without). Returns the granted crossing
 * (for the audit event), or `undefined` for an own-data search. The owner
 * applies the same fold to scope its query.
 */
export function checkSearchFilter(
  method: MethodDef,
  verified: VerifiedIdentity,
  body: Record<string, unknown>,
): SearchCrossing | undefined {
  if (!method.name.startsWith('search.')) return undefined;
  const filter = body.filter;
  if (filter === null || typeof filter !== 'object') return undefined;
  const named = filter as Record<string, unknown>;
  const tenantIds = stringList(named.tenant_ids);
  const userIds = stringList(named.user_ids);
  const sessionIds = stringList(named.session_ids);
  const folded = foldSearchFilter({
    verified,
    ...(tenantIds === undefined ? {} : { tenant_ids: tenantIds }),
    ...(userIds === undefined ? {} : { user_ids: userIds }),
    ...(sessionIds === undefined ? {} : { session_ids: sessionIds }),
  });
  if (!folded.crossed) return undefined;
  const axes = AXES.filter((axis) => {
    if (axis === 'session_ids') return (folded.session_ids?.length ?? 0) > 1;
    const own = axis === 'tenant_ids' ? verified.tenant : verified.user;
    const ids = folded[axis];
    return ids.length > 1 || ids[0] !== own;
  });
  return { tenant_ids: folded.tenant_ids, user_ids: folded.user_ids, session_ids: folded.session_ids, axes };
}
