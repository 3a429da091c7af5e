import { TOOLS_CATALOGUE, TOOLS_RECORD_CALLS } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { requireCallerTenant } from '../handlers/agent-resolve.handler.ts';
import type { CallMetricsRepository } from './call-metrics.repository.ts';
import type { ToolCatalogueDeps } from './tools.handler.ts';

/**
 * `_tools.catalogue` → the MCP tools a run of the agent may call, each
 * with its effective approval policy (the tenant's override, else the
 * connection's), the tenant's overrides by tool name (built-ins included:
 * the engine applies them to its own tools), the servers that could not
 * be listed now, and the OAuth-bound servers without a usable grant for the
 * run's binding scope (`auth_required`: not opened). The agent is resolved
 * for the run's owner (the body's triple); an agent the tenant cannot start
 * is `unknown_agent`.
 */
export function createToolsCatalogueHandler(deps: ToolCatalogueDeps): InternalHandler {
  return serveInternal(TOOLS_CATALOGUE, async ({ identity, body }) => {
    requireCallerTenant(TOOLS_CATALOGUE.name, identity, body.tenant);
    const owner = { tenant: body.tenant, user: body.user, session: body.session, scopes: [] };
    const [agent, overrides] = await Promise.all([
      deps.host.listAgentMcpTools(owner, body.agent_id),
      deps.policies.ofTenant(body.tenant),
    ]);
    return {
      // A tool's OAuth provider and scopes are for tools.describe, not for runs.
      tools: agent.tools.map(({ oauth: _oauth, ...tool }) => ({
        ...tool,
        approval_policy: overrides[tool.name] ?? tool.approval_policy,
      })),
      approval_policies: overrides,
      unavailable_servers: agent.unavailable_servers,
      auth_required: agent.auth_required ?? [],
    };
  });
}

/**
 * `_tools.record_calls`: adds a batch of the tenant's call outcomes into the
 * per-minute counters; a batch id counted before answers `duplicate` and
 * adds nothing (the sender retried a batch whose answer it lost).
 */
export function createRecordCallsHandler(metrics: CallMetricsRepository): InternalHandler {
  return serveInternal(TOOLS_RECORD_CALLS, async ({ identity, body }) => {
    requireCallerTenant(TOOLS_RECORD_CALLS.name, identity, body.tenant);
    const outcome = await metrics.record(body.tenant, body.calls, body.batch_id);
    return outcome.duplicate ? { recorded: 0, duplicate: true } : { recorded: outcome.recorded };
  });
}
