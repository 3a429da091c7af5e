import { isServiceError } from '@ars/contracts';
import type { Agent, AgentRunCounts, FleetEntry, VerifiedIdentity } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import type { FleetDependencies } from './dependencies.ts';

/** How long get and list wait for the run counts before answering without them, in ms. */
const COUNTS_BUDGET_MS = 1_500;

/** The wire `Agent` of a registration and its run counts. */
export function agentView(entry: FleetEntry, counts: AgentRunCounts | undefined): Agent {
  return {
    tenant: entry.tenant,
    agent_id: entry.agent_id,
    registration_key: entry.registration_key,
    incarnation: entry.incarnation,
    version_hash: entry.version_hash,
    hosting: entry.hosting,
    health: entry.health,
    state: entry.state,
    registered_at: entry.registered_at,
    ...(entry.last_reported_at === undefined ? {} : { last_reported_at: entry.last_reported_at }),
    ...(entry.revision_id === null ? {} : { revision_id: entry.revision_id }),
    ...(counts === undefined ? {} : { runs_in_flight: counts.running, runs_queued: counts.pending }),
  };
}

/** What {@link countsOf} asks and where it reports counts it could not get. */
export interface CountsDeps {
  readonly dependencies: FleetDependencies;
  readonly logger: Logger;
}

/**
 * The run counts of get and list, for agents of `tenant`: the registration
 * is the read's subject and the counts are optional members, so a
 * run-executor that does not answer leaves them out (logged) instead of
 * failing the read. So does one that refuses another tenant's counts (an
 * executor from before console:fleet could ask them). Any other failure is
 * the read's.
 */
export async function countsOf(
  deps: CountsDeps,
  caller: VerifiedIdentity,
  tenant: string,
  agentIds: readonly string[],
): Promise<readonly AgentRunCounts[]> {
  try {
    return await deps.dependencies.runCounts(caller, tenant, agentIds, COUNTS_BUDGET_MS);
  } catch (error) {
    if (!isServiceError(error)) throw error;
    const foreignRefusal = error.code === 'scope_mismatch' && tenant !== caller.tenant;
    if (error.code !== 'unavailable' && error.code !== 'timeout' && !foreignRefusal) throw error;
    deps.logger.warn({ err: error, tenant }, 'run counts unavailable; agents read without them');
    return [];
  }
}

/** The wire agents of a page in (tenant, agent id) order, with their run counts asked per tenant. */
export async function agentsWithCounts(
  deps: CountsDeps,
  caller: VerifiedIdentity,
  page: readonly FleetEntry[],
): Promise<Agent[]> {
  const byTenant = new Map<string, FleetEntry[]>();
  for (const entry of page) byTenant.set(entry.tenant, [...(byTenant.get(entry.tenant) ?? []), entry]);
  const counted = await Promise.all(
    [...byTenant].map(async ([tenant, entries]) => {
      const counts = await countsOf(
        deps,
        caller,
        tenant,
        entries.map((e) => e.agent_id),
      );
      return entries.map((entry, i) => agentView(entry, counts[i]));
    }),
  );
  return counted.flat();
}
