import { foldTenantList } from '@ars/auth';
import { AgentListRequest, ServiceError } from '@ars/contracts';
import type { AgentListFilter, FleetEntry, VerifiedIdentity } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';
import { agentsWithCounts } from './agent-record.ts';
import type { CountsDeps } from './agent-record.ts';
import { byCodeUnits } from './fleet.kv.ts';
import type { FleetRegistrar } from './registration.ts';
import { fleetIdentity, identityOf } from './registration.ts';

/** What agents.list needs. */
export interface ListDeps extends CountsDeps {
  readonly registrar: FleetRegistrar;
}

const CURSOR_METHOD = 'agents.list';

/** Where a page ends: the last agent it holds. The list is in (tenant, agent id) order. */
interface Position {
  readonly tenant: string;
  readonly agent_id: string;
}

function encodeCursor(at: Position): string {
  return Buffer.from(JSON.stringify({ m: CURSOR_METHOD, t: at.tenant, a: at.agent_id })).toString('base64url');
}

/** A cursor without `t` (written before the cross-tenant list) is a position in the caller's tenant. */
function decodeCursor(cursor: string, ownTenant: string): Position {
  let parsed: { m?: unknown; t?: unknown; a?: unknown } | undefined;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof parsed;
  } catch {
    parsed = undefined;
  }
  const tenant = parsed?.t ?? ownTenant;
  if (parsed?.m !== CURSOR_METHOD || typeof parsed.a !== 'string' || typeof tenant !== 'string') {
    throw new ServiceError('invalid_request', 'cursor: not a next_cursor of agents.list');
  }
  return { tenant, agent_id: parsed.a };
}

function isAfter(position: Position | undefined, entry: FleetEntry): boolean {
  if (position === undefined) return true;
  const byTenant = byCodeUnits(entry.tenant, position.tenant);
  return byTenant > 0 || (byTenant === 0 && byCodeUnits(entry.agent_id, position.agent_id) > 0);
}

function matching(filter: AgentListFilter | undefined): (entry: FleetEntry) => boolean {
  const { state, health, text } = filter ?? {};
  const needle = text?.toLowerCase();
  return (e) =>
    (state === undefined || e.state === state) &&
    (health === undefined || e.health === health) &&
    (needle === undefined || e.agent_id.toLowerCase().includes(needle));
}

/** The tenants the read covers, sorted: those named, or every tenant with a registration plus the caller's. */
async function tenantsInScope(deps: ListDeps, caller: VerifiedIdentity, filter: AgentListFilter | undefined) {
  const scope = foldTenantList({ verified: caller, tenant_ids: filter?.tenant_ids, all_tenants: filter?.all_tenants });
  const tenants = scope.kind === 'all' ? [...(await deps.registrar.tenants()), caller.tenant] : scope.tenants;
  return [...new Set(tenants)].sort(byCodeUnits);
}

/**
 * The agents after `position` that the filter keeps, tenant by tenant in
 * order, until `wanted` are found. Reading a tenant registers its live agents
 * that have no registration yet (as that tenant's own list does), under the
 * caller's identity in its own tenant and the fleet's in another.
 */
async function collect(
  deps: ListDeps,
  caller: VerifiedIdentity,
  tenants: readonly string[],
  position: Position | undefined,
  keep: (entry: FleetEntry) => boolean,
  wanted: number,
): Promise<FleetEntry[]> {
  const found: FleetEntry[] = [];
  for (const tenant of tenants) {
    if (position !== undefined && byCodeUnits(tenant, position.tenant) < 0) continue;
    const by = tenant === caller.tenant ? identityOf(caller) : fleetIdentity(tenant);
    const entries = await deps.registrar.listTenant(tenant, by);
    found.push(...entries.filter((e) => isAfter(position, e) && keep(e)));
    if (found.length >= wanted) break;
  }
  return found;
}

/**
 * agents.list: the registered agents of the caller's tenant, or (admin or
 * console:fleet) of the tenants `filter.tenant_ids` names or of every tenant
 * (`filter.all_tenants`), in (tenant, agent id) order, filtered by state,
 * health and text in the id, paged by a cursor holding both; each with its
 * run counts when the run-executor answers.
 */
export function createListHandler(deps: ListDeps): RpcHandler {
  return typedMethod(AgentListRequest, async ({ method, identity, body }) => {
    reconcileIdentity(method, identity, body.identity);
    const tenants = await tenantsInScope(deps, identity, body.filter);
    const position = body.cursor === undefined ? undefined : decodeCursor(body.cursor, identity.tenant);
    const found = await collect(deps, identity, tenants, position, matching(body.filter), body.limit + 1);
    const page = found.slice(0, body.limit);
    const items = await agentsWithCounts(deps, identity, page);
    const last = page[page.length - 1];
    return found.length > body.limit && last !== undefined
      ? { items, next_cursor: encodeCursor({ tenant: last.tenant, agent_id: last.agent_id }) }
      : { items };
  });
}
