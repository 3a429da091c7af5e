import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import { Agent, AgentCommand, AgentPermission, AgentState } from '../schemas/agent.ts';
import { AgentId, SkillView } from '../schemas/agent-config.ts';
import {
  Id,
  JsonObject,
  Timestamp,
  filterList,
  pageOf,
  pageRequest,
  record,
  requestOf,
  timeWindow,
} from '../schemas/common.ts';
import { LlmOverridesView } from '../schemas/governance.ts';
import { Tool } from '../schemas/tool.ts';
import { onFamily } from './routing.ts';

/** AgentControlRequest of the five fleet-control verbs (admin). */
export const AgentControlRequest = requestOf({
  agent_id: AgentId,
  reason: z.string().max(1024).optional(),
  command_id: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9._:-]+$/)
    .optional()
    .describe(
      "idempotency key of the command within the tenant: a repeat answers the first call's response and changes nothing; absent: a fresh id",
    ),
  force: z
    .boolean()
    .optional()
    .describe('agents.deregister only: deregister although runs are in flight (they are hard-cancelled)'),
});
export type AgentControlRequest = z.infer<typeof AgentControlRequest>;

/** The command issued; the effect arrives as agent.* events. */
export const AgentControlResponse = record({
  agent_id: z.string(),
  command: AgentCommand,
  accepted: z.boolean().describe('true when the command changed the agent; false when it already was in that state'),
  issued_at: Timestamp,
  command_id: z.string().optional(),
  state: AgentState.optional().describe('the state the command left the agent in'),
  incarnation: z.int().nonnegative().optional(),
});
export type AgentControlResponse = z.infer<typeof AgentControlResponse>;

const byAgent = () => requestOf({ agent_id: AgentId });

/** agents.get. */
export const AgentGetRequest = byAgent();
export type AgentGetRequest = z.infer<typeof AgentGetRequest>;
/** Response of `agents.get`. */
export const AgentGetResponse = record({ agent: Agent });
export type AgentGetResponse = z.infer<typeof AgentGetResponse>;

/** agents.governance: the tier, budget usage and overrides that apply to the agent's runs. */
export const AgentGovernanceRequest = byAgent();
export type AgentGovernanceRequest = z.infer<typeof AgentGovernanceRequest>;
/** Response of `agents.governance`. */
export const AgentGovernanceResponse = record({
  agent_id: z.string(),
  tier: z.string().optional(),
  budget: JsonObject.optional(),
  overrides: LlmOverridesView.optional(),
});
export type AgentGovernanceResponse = z.infer<typeof AgentGovernanceResponse>;

/**
 * Filters of agents.list. `tenant_ids` and `all_tenants` are the cross-tenant
 * fan-in (X): omitted, the read is the caller's tenant; naming another tenant
 * or more than one, or `all_tenants: true`, needs admin or console:fleet
 * (else 403 `scope_mismatch`). The two exclude each other (400).
 */
export const AgentListFilter = z.strictObject({
  tenant_ids: filterList(Id)
    .optional()
    .describe('added member: the tenants to list; another tenant or more than one needs admin or console:fleet'),
  all_tenants: z
    .boolean()
    .optional()
    .describe(
      'added member: true lists the agents of every tenant (needs admin or console:fleet); not with tenant_ids',
    ),
  state: z.string().min(1).optional(),
  health: z.string().min(1).optional(),
  text: z.string().min(1).max(1024).optional().describe('matched case-insensitively within the agent id'),
});
export type AgentListFilter = z.infer<typeof AgentListFilter>;

/** agents.list: by (tenant, agent id), paged; the cursor carries both. */
export const AgentListRequest = requestOf({
  filter: AgentListFilter.optional(),
  ...pageRequest,
});
export type AgentListRequest = z.infer<typeof AgentListRequest>;
/** Response of `agents.list`. */
export const AgentListResponse = record({ ...pageOf(Agent) });
export type AgentListResponse = z.infer<typeof AgentListResponse>;

/** agents.memory: the memory the agent's runs use. */
export const AgentMemoryRequest = byAgent();
export type AgentMemoryRequest = z.infer<typeof AgentMemoryRequest>;
/** Response of `agents.memory`. */
export const AgentMemoryResponse = record({
  agent_id: z.string(),
  item_count: z.int().nonnegative(),
  size_bytes: z.int().nonnegative(),
  health: z.string().optional(),
  tiers: z
    .array(record({ tier: z.string(), item_count: z.int().nonnegative(), size_bytes: z.int().nonnegative() }))
    .optional()
    .describe("the tenant's memory the agent's runs read, by tier (tenant, user, session)"),
});
export type AgentMemoryResponse = z.infer<typeof AgentMemoryResponse>;

/** agents.metrics: run figures of the agent over a window. */
export const AgentMetricsRequest = requestOf({ agent_id: AgentId, ...timeWindow });
export type AgentMetricsRequest = z.infer<typeof AgentMetricsRequest>;
/** Response of `agents.metrics`. */
export const AgentMetricsResponse = record({
  agent_id: z.string(),
  since: Timestamp.optional(),
  until: Timestamp.optional(),
  counters: z.record(z.string(), z.number()).describe('e.g. runs_started, runs_completed, runs_failed, llm_cost'),
});
export type AgentMetricsResponse = z.infer<typeof AgentMetricsResponse>;

/** agents.permissions. */
export const AgentPermissionsRequest = byAgent();
export type AgentPermissionsRequest = z.infer<typeof AgentPermissionsRequest>;
/** Response of `agents.permissions`. */
export const AgentPermissionsResponse = record({ agent_id: z.string(), permissions: z.array(AgentPermission) });
export type AgentPermissionsResponse = z.infer<typeof AgentPermissionsResponse>;

/** agents.skills. */
export const AgentSkillsRequest = byAgent();
export type AgentSkillsRequest = z.infer<typeof AgentSkillsRequest>;
/** Response of `agents.skills`. */
export const AgentSkillsResponse = record({ agent_id: z.string(), items: z.array(SkillView) });
export type AgentSkillsResponse = z.infer<typeof AgentSkillsResponse>;

/** agents.tools: the tools the agent's runs see (after tool exposure). */
export const AgentToolsRequest = byAgent();
export type AgentToolsRequest = z.infer<typeof AgentToolsRequest>;
/** Response of `agents.tools`. */
export const AgentToolsResponse = record({ agent_id: z.string(), items: z.array(Tool) });
export type AgentToolsResponse = z.infer<typeof AgentToolsResponse>;

const CONTROLS: ReadonlyArray<readonly [string, string]> = [
  ['agents.deregister', 'Remove an agent from the fleet registry (admin).'],
  ['agents.drain', 'Stop giving an agent new work; let in-flight runs finish (admin).'],
  ['agents.force_stop', 'Stop an agent at once (admin).'],
  ['agents.pause', 'Pause an agent (admin).'],
  ['agents.restart', 'Ask an agent to restart (admin).'],
];

const READS: ReadonlyArray<readonly [string, string, z.ZodType, z.ZodType, string]> = [
  ['agents.get', 'Get', AgentGetRequest, AgentGetResponse, 'Read one registered agent.'],
  [
    'agents.governance',
    'Governance',
    AgentGovernanceRequest,
    AgentGovernanceResponse,
    "Read the governance applying to an agent's runs.",
  ],
  [
    'agents.list',
    'List',
    AgentListRequest,
    AgentListResponse,
    "List the agent fleet: the caller's tenant, or (admin or console:fleet) other tenants or every tenant.",
  ],
  [
    'agents.memory',
    'Memory',
    AgentMemoryRequest,
    AgentMemoryResponse,
    "Read the size and health of an agent's memory.",
  ],
  ['agents.metrics', 'Metrics', AgentMetricsRequest, AgentMetricsResponse, "Read an agent's run figures."],
  [
    'agents.permissions',
    'Permissions',
    AgentPermissionsRequest,
    AgentPermissionsResponse,
    "Read an agent's permissions.",
  ],
  ['agents.skills', 'Skills', AgentSkillsRequest, AgentSkillsResponse, "List an agent's skills."],
  ['agents.tools', 'Tools', AgentToolsRequest, AgentToolsResponse, 'List the tools an agent exposes to its runs.'],
];

/** Agent fleet methods (agent-registry): `/v1/agents/<name>`. */
export const AGENT_METHODS: readonly MethodDef[] = [
  ...CONTROLS.map(([name, summary]) =>
    defineMethod({
      name,
      family: 'agents',
      ...onFamily(name),
      service: 'agent-registry',
      auth: ['M', 'A'],
      requestName: 'AgentControlRequest',
      responseName: 'AgentControlResponse',
      request: AgentControlRequest,
      response: AgentControlResponse,
      summary,
    }),
  ),
  ...READS.map(([name, stem, request, response, summary]) =>
    defineMethod({
      name,
      family: 'agents',
      ...onFamily(name),
      service: 'agent-registry',
      // agents.list fans in across tenants with filter.tenant_ids / filter.all_tenants (decisions).
      auth: name === 'agents.list' ? ['R', 'X'] : ['R'],
      requestName: `Agent${stem}Request`,
      responseName: `Agent${stem}Response`,
      request,
      response,
      summary,
    }),
  ),
];
