import { z } from 'zod';
import { defineInternalEndpoint } from '../internal-def.ts';
import { AgentId } from '../schemas/agent-config.ts';
import { JsonObject, Timestamp } from '../schemas/common.ts';
import { Count } from './shapes.ts';

/**
 * The internal endpoints behind the agents.* reads and the fleet's health
 * pass: agent-registry asks the run-executor (its tasks), memory and
 * governance. Each `caller`-gated one serves the caller's own tenant; a body
 * tenant other than the caller's needs `admin` (403 `scope_mismatch`), or,
 * for `_tasks.agent_runs` only, `admin` or `console:fleet` (the run counts of
 * agents.list's cross-tenant fan-in, a read-only figure).
 */

/** `_tasks.agent_runs`: the runs not ended of some agents of a tenant (another tenant: admin or console:fleet). */
export const TasksAgentRunsRequest = z.strictObject({
  tenant: z.string().min(1),
  agent_ids: z.array(AgentId).min(1).max(100),
});
export type TasksAgentRunsRequest = z.infer<typeof TasksAgentRunsRequest>;

/** One agent's runs not ended: `pending` (queued, not claimed) and `running` (claimed, parked included). */
export const AgentRunCounts = z.object({ agent_id: z.string(), pending: Count, running: Count });
export type AgentRunCounts = z.infer<typeof AgentRunCounts>;

export const TasksAgentRunsReply = z.object({
  items: z.array(AgentRunCounts).describe('one per asked agent, in the order asked'),
  complete: z.boolean().describe('false when the count stopped at its bound (the counts are lower bounds)'),
});
export type TasksAgentRunsReply = z.infer<typeof TasksAgentRunsReply>;

/** `_tasks.agent_runs`: in-flight counts of agents.get, agents.list and the in-flight check of agents.deregister. */
export const TASKS_AGENT_RUNS = defineInternalEndpoint({
  name: '_tasks.agent_runs',
  service: 'run-executor',
  callers: ['agent-registry'],
  gate: 'caller',
  request: TasksAgentRunsRequest,
  reply: TasksAgentRunsReply,
  refusals: {},
  summary: "counts the queued and in-flight runs of a tenant's agents",
});

/** `_tasks.agent_metrics`: one agent's run figures over a window of start times. */
export const TasksAgentMetricsRequest = z.strictObject({
  tenant: z.string().min(1),
  agent_id: AgentId,
  since: Timestamp.optional(),
  until: Timestamp.optional(),
});
export type TasksAgentMetricsRequest = z.infer<typeof TasksAgentMetricsRequest>;

export const TasksAgentMetricsReply = z.object({
  counters: z.record(z.string(), z.number()),
  complete: z.boolean().describe('false when the window held more runs than one read covers (figures of the newest)'),
});
export type TasksAgentMetricsReply = z.infer<typeof TasksAgentMetricsReply>;

/** `_tasks.agent_metrics`: the stored tasks' figures behind agents.metrics. */
export const TASKS_AGENT_METRICS = defineInternalEndpoint({
  name: '_tasks.agent_metrics',
  service: 'run-executor',
  callers: ['agent-registry'],
  gate: 'caller',
  request: TasksAgentMetricsRequest,
  reply: TasksAgentMetricsReply,
  refusals: {},
  summary: "an agent's run counts, durations, tokens and cost from its stored tasks",
});

/** `_tasks.agent_outcomes`: runs ended since an instant, by agent, over every tenant. */
export const TasksAgentOutcomesRequest = z.strictObject({ since: Timestamp });
export type TasksAgentOutcomesRequest = z.infer<typeof TasksAgentOutcomesRequest>;

export const AgentOutcomes = z.object({
  tenant: z.string(),
  agent_id: z.string(),
  completed: Count,
  failed: Count,
  cancelled: Count,
});
export type AgentOutcomes = z.infer<typeof AgentOutcomes>;

export const TasksAgentOutcomesReply = z.object({ items: z.array(AgentOutcomes) });
export type TasksAgentOutcomesReply = z.infer<typeof TasksAgentOutcomesReply>;

/**
 * `_tasks.agent_outcomes`: the fleet's health pass (no end user behind it:
 * gate `service`). Reads the tasks ended in the window on an index of their
 * end time; bounded.
 */
export const TASKS_AGENT_OUTCOMES = defineInternalEndpoint({
  name: '_tasks.agent_outcomes',
  service: 'run-executor',
  callers: ['agent-registry'],
  gate: 'service',
  request: TasksAgentOutcomesRequest,
  reply: TasksAgentOutcomesReply,
  refusals: {},
  summary: 'the outcomes of the runs ended since an instant, by tenant and agent',
});

/** `_memory.tenant_usage`: the size of a tenant's memory by tier. */
export const MemoryTenantUsageRequest = z.strictObject({ tenant: z.string().min(1) });
export type MemoryTenantUsageRequest = z.infer<typeof MemoryTenantUsageRequest>;

export const MemoryTierUsage = z.object({ tier: z.string(), item_count: Count, size_bytes: Count });
export type MemoryTierUsage = z.infer<typeof MemoryTierUsage>;

export const MemoryTenantUsageReply = z.object({
  item_count: Count,
  size_bytes: Count,
  health: z.string(),
  tiers: z.array(MemoryTierUsage),
});
export type MemoryTenantUsageReply = z.infer<typeof MemoryTenantUsageReply>;

/** `_memory.tenant_usage`: behind agents.memory. */
export const MEMORY_TENANT_USAGE = defineInternalEndpoint({
  name: '_memory.tenant_usage',
  service: 'memory',
  callers: ['agent-registry'],
  gate: 'caller',
  request: MemoryTenantUsageRequest,
  reply: MemoryTenantUsageReply,
  refusals: {},
  summary: "the item count and size of a tenant's memory, by tier, and the memory service's health",
});

/** `_governance.tenant_budget`: the tier, budgets and overrides that govern a tenant's runs. */
export const GovernanceTenantBudgetRequest = z.strictObject({ tenant: z.string().min(1) });
export type GovernanceTenantBudgetRequest = z.infer<typeof GovernanceTenantBudgetRequest>;

export const GovernanceTenantBudgetReply = z.object({
  tier: z.string().describe("the tier the tenant's runs are governed by (the posture's default tier)"),
  budgets: z.array(JsonObject).describe('BudgetUsage of each tier with a budget'),
  spend: z.array(JsonObject).describe("the tenant's current spend windows"),
  overrides: JsonObject.describe("the tenant's LLM overrides"),
});
export type GovernanceTenantBudgetReply = z.infer<typeof GovernanceTenantBudgetReply>;

/** `_governance.tenant_budget`: behind agents.governance. */
export const GOVERNANCE_TENANT_BUDGET = defineInternalEndpoint({
  name: '_governance.tenant_budget',
  service: 'governance',
  callers: ['agent-registry'],
  gate: 'caller',
  request: GovernanceTenantBudgetRequest,
  reply: GovernanceTenantBudgetReply,
  refusals: {},
  summary: "the governance tier, budget usage, spend and overrides of a tenant's runs",
});
