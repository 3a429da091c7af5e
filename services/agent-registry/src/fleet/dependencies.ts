import {
  GOVERNANCE_TENANT_BUDGET,
  MEMORY_TENANT_USAGE,
  serviceCallerIdentity,
  TASKS_AGENT_METRICS,
  TASKS_AGENT_OUTCOMES,
  TASKS_AGENT_RUNS,
} from '@ars/contracts';
import type {
  AgentOutcomes,
  AgentRunCounts,
  GovernanceTenantBudgetReply,
  InternalEndpointDef,
  InternalReply,
  InternalRequest,
  MemoryTenantUsageReply,
  TasksAgentMetricsReply,
  VerifiedIdentity,
} from '@ars/contracts';
import { callInternalWithinBudget } from '@ars/bus';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';

/**
 * What the fleet asks other services: the run-executor (its tasks), memory
 * and governance. Each call is retried within its budget while the owner
 * does not answer, then fails 503 `unavailable`: no figure is ever made up.
 */
export interface FleetDependencies {
  /**
   * Queued and in-flight runs of the agents of `tenant`, in the order asked;
   * `budgetMs` shortens the call's budget. Another tenant than the caller's
   * needs admin or console:fleet (the run-executor checks the caller's claims).
   */
  runCounts(
    caller: VerifiedIdentity,
    tenant: string,
    agentIds: readonly string[],
    budgetMs?: number,
  ): Promise<AgentRunCounts[]>;
  metrics(
    caller: VerifiedIdentity,
    request: { tenant: string; agent_id: string; since?: string | undefined; until?: string | undefined },
  ): Promise<TasksAgentMetricsReply>;
  /** Outcomes of every tenant's runs ended since `since` (the health pass). */
  outcomes(since: string): Promise<AgentOutcomes[]>;
  memory(caller: VerifiedIdentity, tenant: string): Promise<MemoryTenantUsageReply>;
  governance(caller: VerifiedIdentity, tenant: string): Promise<GovernanceTenantBudgetReply>;
}

/** Most agent ids one `_tasks.agent_runs` call takes (its request's bound); a longer list is asked in parts. */
const MAX_COUNTED_AGENTS = 100;

export function createFleetDependencies(rpc: RpcClient, logger: Logger, timeoutMs: number): FleetDependencies {
  const call = <E extends InternalEndpointDef>(
    target: E,
    caller: VerifiedIdentity,
    body: InternalRequest<E>,
    budgetMs = timeoutMs,
  ): Promise<InternalReply<E>> =>
    callInternalWithinBudget(rpc, target, caller, body, {
      timeoutMs: Math.min(budgetMs, timeoutMs),
      onWait: () =>
        logger.warn({ service: target.service, endpoint: target.name }, 'dependency not answering; asking again'),
    });
  return {
    async runCounts(caller, tenant, agentIds, budgetMs) {
      const chunks: string[][] = [];
      for (let at = 0; at < agentIds.length; at += MAX_COUNTED_AGENTS) {
        chunks.push(agentIds.slice(at, at + MAX_COUNTED_AGENTS));
      }
      const replies = await Promise.all(
        chunks.map((agent_ids) => call(TASKS_AGENT_RUNS, caller, { tenant, agent_ids }, budgetMs)),
      );
      return replies.flatMap((reply) => reply.items);
    },
    metrics: (caller, request) =>
      call(TASKS_AGENT_METRICS, caller, {
        tenant: request.tenant,
        agent_id: request.agent_id,
        ...(request.since === undefined ? {} : { since: request.since }),
        ...(request.until === undefined ? {} : { until: request.until }),
      }),
    async outcomes(since) {
      const { items } = await call(TASKS_AGENT_OUTCOMES, serviceCallerIdentity('agent-registry'), { since });
      return items;
    },
    memory: (caller, tenant) => call(MEMORY_TENANT_USAGE, caller, { tenant }),
    governance: (caller, tenant) => call(GOVERNANCE_TENANT_BUDGET, caller, { tenant }),
  };
}
