import { ToolSetApprovalPolicyRequest, ToolListRequest, ToolGetRequest, ToolDescribeRequest } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { reconcileIdentity, requireAdmin, typedMethod } from '@ars/service-kit';
import type { ToolHost } from '../mcp/index.ts';
import type { ApprovalPolicyRepository } from './approval-policy.repository.ts';
import { buildCatalogue, findTool, manifestOf, matchesFilter, pageOfTools } from './catalogue.ts';
import type { TenantCatalogue } from './catalogue.ts';

/** What the catalogue handlers need. */
export interface ToolCatalogueDeps {
  readonly host: Pick<ToolHost, 'listTenantMcpTools' | 'listAgentMcpTools'>;
  readonly policies: ApprovalPolicyRepository;
}

/** The caller's tenant's catalogue: built-ins, the MCP tools of its agents, its approval overrides. */
export async function loadCatalogue(deps: ToolCatalogueDeps, caller: VerifiedIdentity): Promise<TenantCatalogue> {
  const [mcp, overrides] = await Promise.all([
    deps.host.listTenantMcpTools(caller, caller.tenant),
    deps.policies.ofTenant(caller.tenant),
  ]);
  return buildCatalogue(mcp, overrides);
}

/** tools.list: the caller's tenant's tools by name, filtered and paged. */
function list(deps: ToolCatalogueDeps): RpcHandler {
  return typedMethod(ToolListRequest, async ({ method, identity, body: request }) => {
    reconcileIdentity(method, identity, request.identity);
    const catalogue = await loadCatalogue(deps, identity);
    const matching = catalogue.tools.filter((tool) => matchesFilter(tool, request.filter));
    return pageOfTools(matching, request.limit, request.cursor);
  });
}

/** tools.get: one tool of the catalogue (404 `not_found` for an unknown name). */
function get(deps: ToolCatalogueDeps): RpcHandler {
  return typedMethod(ToolGetRequest, async ({ method, identity, body: request }) => {
    reconcileIdentity(method, identity, request.identity);
    return findTool(await loadCatalogue(deps, identity), request.name);
  });
}

/** tools.describe: one tool's full manifest. */
function describe(deps: ToolCatalogueDeps): RpcHandler {
  return typedMethod(ToolDescribeRequest, async ({ method, identity, body: request }) => {
    reconcileIdentity(method, identity, request.identity);
    const catalogue = await loadCatalogue(deps, identity);
    return manifestOf(findTool(catalogue, request.name), catalogue);
  });
}

/**
 * tools.set_approval_policy (admin): the tenant's policy for one tool of its
 * catalogue, which then wins over the MCP connection's and the tool's own.
 * Setting the same policy again changes nothing. The event registry has no
 * event for it, so none is published.
 */
function setApprovalPolicy(deps: ToolCatalogueDeps): RpcHandler {
  return typedMethod(ToolSetApprovalPolicyRequest, async ({ method, identity, body: request }) => {
    reconcileIdentity(method, identity, request.identity);
    requireAdmin(method, identity);
    const tool = findTool(await loadCatalogue(deps, identity), request.name);
    const setBy = { tenant: identity.tenant, user: identity.user, session: identity.session };
    await deps.policies.put(identity.tenant, tool.name, request.policy, setBy);
    return { tool: { ...tool, approval_policy: request.policy } };
  });
}

/** tools.list, get, describe and set_approval_policy. */
export function createToolCatalogueHandlers(deps: ToolCatalogueDeps): Record<string, RpcHandler> {
  return {
    'tools.list': list(deps),
    'tools.get': get(deps),
    'tools.describe': describe(deps),
    'tools.set_approval_policy': setApprovalPolicy(deps),
  };
}
