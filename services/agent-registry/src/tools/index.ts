import type { RpcHandler } from '@ars/bus';
import type { InternalHandler } from '@ars/service-kit';
import type { Store } from '@ars/store';
import type { ToolHost } from '../mcp/index.ts';
import { createApprovalPolicyRepository } from './approval-policy.repository.ts';
import type { ApprovalPolicyRepository } from './approval-policy.repository.ts';
import { createCallMetricsRepository } from './call-metrics.repository.ts';
import { createToolMetricsHandlers } from './tool-metrics.handler.ts';
import { createToolCatalogueHandlers } from './tools.handler.ts';
import { createRecordCallsHandler, createToolsCatalogueHandler } from './tools-internal.handler.ts';

/**
 * The tool catalogue of agent-registry: `tools.list`, `get`, `describe`,
 * `set_approval_policy`, `metrics`, `content_stats`, and the internal
 * `_tools.catalogue` and `_tools.record_calls`. `tools.revoke_oauth` is left
 * out (answers `unimplemented`) until OAuth grants exist.
 */
export interface ToolsModule {
  /** The tenants' approval policies (also read into each run's effective configuration). */
  readonly policies: ApprovalPolicyRepository;
  readonly handlers: Record<string, RpcHandler>;
  readonly internalHandlers: readonly InternalHandler[];
}

/** What the tool catalogue is built from. */
export interface ToolsModuleDeps {
  readonly store: Store;
  /** The MCP host: the MCP tools of an agent and of a tenant's agents. */
  readonly host: Pick<ToolHost, 'listTenantMcpTools' | 'listAgentMcpTools'>;
}

/** Creates the repositories (and their indexes) and the handlers. */
export async function createToolsModule({ store, host }: ToolsModuleDeps): Promise<ToolsModule> {
  const [policies, metrics] = await Promise.all([
    createApprovalPolicyRepository(store),
    createCallMetricsRepository(store),
  ]);
  const catalogue = { host, policies };
  return {
    policies,
    handlers: { ...createToolCatalogueHandlers(catalogue), ...createToolMetricsHandlers({ ...catalogue, metrics }) },
    internalHandlers: [createToolsCatalogueHandler(catalogue), createRecordCallsHandler(metrics)],
  };
}
