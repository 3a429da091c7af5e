import { isServiceError, refusalOf, ServiceError, TOOLS_CATALOGUE } from '@ars/contracts';
import { agentEgressPolicy, withArtifactEgress } from '../tools/mcp-egress.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { sourceOf } from '../tools/tool.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { AgentConfigRefused } from './agent-config.ts';
import type { AgentRunConfig } from './agent-config.ts';
import { authorizedCatalogue } from './auth-wait.ts';
import { occurredAt } from './run-events.ts';
import type { RunState } from './run-state.ts';

/**
 * The tools of one claim of a run: the executor's built-ins and, when the
 * agent has MCP connections that are not disabled, its MCP tools from
 * agent-registry's `_tools.catalogue` (asked at each claim, a redelivery's
 * included), with the tenant's approval policies over both: those recorded
 * with the run's effective configuration (see `createToolRegistry` for the
 * precedence). An agent without MCP connections never asks. The MCP tools
 * send the artifacts their arguments name as `artifact://<id>`, under the
 * agent's policy (`tools/mcp-egress.ts`).
 *
 * The catalogue not answering is waited for like the agent's configuration:
 * `unavailable` or `timeout` (an agent-registry without the endpoint counts
 * as unavailable) and the run is retried later; `unknown_agent` fails it
 * `agent_unavailable`. A server the catalogue lists as unavailable just has
 * no tools in this run (logged). A server it lists under `auth_required` is
 * waited for: the user authorizes it, then the catalogue is asked again
 * (`auth-wait.ts`); undefined when the run ended or must stop meanwhile.
 */
export async function runToolRegistry(run: RunState, agent: AgentRunConfig): Promise<ToolRegistry | undefined> {
  const disabled = new Set(agent.sourceDisables);
  if (!agent.mcpServers.some((server) => !disabled.has(server))) {
    // The tenant's policies came with the configuration: built-ins are gated by them without asking the catalogue.
    return Object.keys(agent.approvalPolicies).length === 0
      ? run.deps.tools
      : run.deps.tools.forRun([], agent.approvalPolicies);
  }
  const catalogue = await authorizedCatalogue(run, agent, () => fetchCatalogue(run, agent.agentId));
  if (catalogue === undefined) return undefined;
  if (catalogue.unavailable_servers.length > 0) {
    run.log.warn(
      {
        servers: catalogue.unavailable_servers.map((s) => ({ server: s.server_id, state: s.state, reason: s.reason })),
      },
      'MCP servers unavailable: their tools are left out of this run',
    );
  }
  const mcpTools = withArtifactEgress(run.deps.mcp.definitions(catalogue.tools, agent.agentId), catalogue.tools, {
    taskId: run.taskId,
    artifacts: run.deps.artifacts,
    events: run.events,
    policy: agentEgressPolicy(agent),
  });
  for (const tool of mcpTools) {
    if (run.deps.tools.get(tool.name) !== undefined) {
      run.log.warn({ tool: tool.name, server: tool.source }, 'MCP tool left out: a built-in tool has its name');
      reportCollision(run, tool.name, sourceOf(tool));
    }
  }
  // The policies recorded with the configuration: a redelivered run is gated as its first claim was.
  return run.deps.tools.forRun(mcpTools, { ...catalogue.approval_policies, ...agent.approvalPolicies });
}

/**
 * `planner.tool_declaration_collision`: the built-in is kept, the MCP tool
 * dropped. Once per run: at the first claim only, under a fixed event id
 * (a redelivery before the first checkpoint publishes a copy the stream drops).
 */
function reportCollision(run: RunState, name: string, server: string): void {
  if (run.checkpoint.step > 0) return;
  run.events.emit(
    'planner.tool_declaration_collision',
    {
      Identity: run.events.quad,
      DeclaredName: name,
      DeclaredTool: `builtin:${name}`,
      DroppedTool: `${server}:${name}`,
      OccurredAt: occurredAt(),
    },
    `${run.taskId}:tool-collision:${server}:${name}`,
  );
}

async function fetchCatalogue(run: RunState, agentId: string) {
  try {
    return await run.deps.mcp.catalogue(run.owner, agentId);
  } catch (error) {
    if (refusalOf(TOOLS_CATALOGUE, error) === 'unknown_agent') throw new AgentConfigRefused((error as Error).message);
    if (isServiceError(error) && error.code === 'unimplemented') {
      throw new ServiceError('unavailable', 'agent-registry does not serve _tools.catalogue', { cause: error });
    }
    throw error;
  }
}

/** The tools of the agent's exposure, minus disabled sources (`builtin` hides every built-in tool, a server id its tools). */
export function exposedTools(tools: ToolRegistry, agent: AgentRunConfig): Map<string, ToolDefinition> {
  const disabled = new Set(agent.sourceDisables);
  const exposed = tools.exposed(agent.toolExposure).filter((t) => !disabled.has(sourceOf(t)));
  return new Map(exposed.map((t) => [t.name, t]));
}
