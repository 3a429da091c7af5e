import { canFanIn } from '@ars/auth';
import { ServiceError, TASKS_AGENT_METRICS, TASKS_AGENT_OUTCOMES, TASKS_AGENT_RUNS } from '@ars/contracts';
import type { AgentOutcomes, CrossingClaim, VerifiedIdentity } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import type { Collection, Filter, Store } from '@ars/store';
import type { TaskRecord } from '../domain/task.ts';
import { TASKS_COLLECTION } from '../store/task.repository.ts';
import { agentFigures } from '../domain/agent-figures.ts';

/**
 * The run-executor's side of the agents.* reads and of the fleet's health
 * pass, from the stored tasks: in-flight counts, an agent's run figures over
 * a window, and the outcomes of the runs ended since an instant. Each read
 * is one bounded query; a task without `agent_id` is a run of the default
 * agent.
 */

/** Most tasks one fleet read looks at (newest first); past it the answer says it is incomplete. */
export const FLEET_READ_LIMIT = 10_000;

const NOT_ENDED = ['pending', 'running', 'paused'] as const;

/**
 * A body tenant other than the caller's needs `claim`: admin for the
 * figures, admin or console:fleet for the run counts (agents.list fans in
 * across tenants for either claim).
 */
function requireTenant(
  endpoint: string,
  caller: VerifiedIdentity,
  tenant: string,
  claim: CrossingClaim = 'admin',
): void {
  if (tenant !== caller.tenant && !canFanIn(caller.scopes, claim)) {
    throw new ServiceError('scope_mismatch', `${endpoint}: the body tenant is not the calling identity's tenant`);
  }
}

/** The tasks of `agentId` (a task naming none ran the default agent). */
function agentFilter(agentId: string, defaultAgentId: string): Filter<TaskRecord> {
  return agentId === defaultAgentId
    ? { $or: [{ agent_id: agentId }, { agent_id: { $exists: false } }] }
    : { agent_id: agentId };
}

export interface FleetReadOptions {
  readonly defaultAgentId: string;
  /** @default {@link FLEET_READ_LIMIT} */
  readonly limit?: number;
}

/** `_tasks.agent_runs`, `_tasks.agent_metrics` and `_tasks.agent_outcomes`; creates the end-time index the last reads. */
export async function createFleetReadHandlers(store: Store, options: FleetReadOptions): Promise<InternalHandler[]> {
  const tasks: Collection<TaskRecord> = store.collection<TaskRecord>(TASKS_COLLECTION);
  // Sparse: only ended tasks carry `ended_at`; the health pass reads the last interval's on it.
  await tasks.createIndex({ ended_at: 1 }, { sparse: true });
  const limit = options.limit ?? FLEET_READ_LIMIT;
  const agentOf = (task: Pick<TaskRecord, 'agent_id'>) => task.agent_id ?? options.defaultAgentId;

  const runs = serveInternal(TASKS_AGENT_RUNS, async ({ identity, body }) => {
    requireTenant(TASKS_AGENT_RUNS.name, identity, body.tenant, 'admin_or_fleet');
    const found = await tasks.find(
      { tenant: body.tenant, status: { $in: [...NOT_ENDED] } },
      { projection: { agent_id: 1, status: 1 }, sort: { created_at: -1 }, limit: limit + 1 },
    );
    const counts = new Map(body.agent_ids.map((id) => [id, { agent_id: id, pending: 0, running: 0 }]));
    for (const task of found.slice(0, limit)) {
      const entry = counts.get(agentOf(task));
      if (entry === undefined) continue;
      if (task.status === 'pending') entry.pending += 1;
      else entry.running += 1;
    }
    return { items: body.agent_ids.map((id) => counts.get(id)!), complete: found.length <= limit };
  });

  const metrics = serveInternal(TASKS_AGENT_METRICS, async ({ identity, body }) => {
    requireTenant(TASKS_AGENT_METRICS.name, identity, body.tenant);
    const window = {
      ...(body.since === undefined ? {} : { $gte: body.since }),
      ...(body.until === undefined ? {} : { $lt: body.until }),
    };
    const filter: Filter<TaskRecord> = {
      $and: [
        { tenant: body.tenant, ...(Object.keys(window).length === 0 ? {} : { created_at: window }) },
        agentFilter(body.agent_id, options.defaultAgentId),
      ],
    };
    const found = await tasks.find(filter, {
      projection: { status: 1, started_at: 1, ended_at: 1, steps: 1, cost_usd: 1 },
      sort: { created_at: -1 },
      limit: limit + 1,
    });
    return { counters: agentFigures(found.slice(0, limit)), complete: found.length <= limit };
  });

  const outcomes = serveInternal(TASKS_AGENT_OUTCOMES, async ({ body }) => {
    const found = await tasks.find(
      { ended_at: { $gte: body.since } },
      { projection: { tenant: 1, agent_id: 1, status: 1 }, limit },
    );
    const byAgent = new Map<string, AgentOutcomes>();
    for (const task of found) {
      const agentId = agentOf(task);
      const key = JSON.stringify([task.tenant, agentId]);
      const entry = byAgent.get(key) ?? {
        tenant: task.tenant,
        agent_id: agentId,
        completed: 0,
        failed: 0,
        cancelled: 0,
      };
      if (task.status === 'complete') entry.completed += 1;
      else if (task.status === 'failed') entry.failed += 1;
      else if (task.status === 'cancelled') entry.cancelled += 1;
      byAgent.set(key, entry);
    }
    return { items: [...byAgent.values()] };
  });

  return [runs, metrics, outcomes];
}
