import type { RpcHandler } from '@ars/bus';
import { startPeriodic } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import type { Store } from '@ars/store';
import type { Logger } from '@ars/telemetry';
import type { ToolHost } from '../mcp/index.ts';
import { createApprovalPolicyRepository } from './approval-policy.repository.ts';
import type { ApprovalPolicyRepository } from './approval-policy.repository.ts';
import { createCallMetricsRepository } from './call-metrics.repository.ts';
import type { CallMetricsRepository } from './call-metrics.repository.ts';
import { createToolMetricsHandlers } from './tool-metrics.handler.ts';
import { createToolCatalogueHandlers } from './tools.handler.ts';
import { createRecordCallsHandler, createToolsCatalogueHandler } from './tools-internal.handler.ts';

/**
 * The tool catalogue of agent-registry: `tools.list`, `get`, `describe`,
 * `set_approval_policy`, `metrics`, `content_stats`, and the internal
 * `_tools.catalogue` and `_tools.record_calls` (`tools.revoke_oauth` is the
 * OAuth module's). The per-minute counters older than the retention, and
 * batch receipts older than a day, are deleted hourly and at start.
 */
export interface ToolsModule {
  /** The tenants' approval policies (also read into each run's effective configuration). */
  readonly policies: ApprovalPolicyRepository;
  /** The call counters (the MCP host records app calls into them too). */
  readonly metrics: CallMetricsRepository;
  readonly handlers: Record<string, RpcHandler>;
  readonly internalHandlers: readonly InternalHandler[];
  /** Stops the pruning. */
  stop(): Promise<void>;
}

/** What the tool catalogue is built from. */
export interface ToolsModuleDeps {
  readonly store: Store;
  /** The MCP host: the MCP tools of an agent and of a tenant's agents. */
  readonly host: Pick<ToolHost, 'listTenantMcpTools' | 'listAgentMcpTools'>;
  /** The call counters, when made already (else made here). */
  readonly metrics?: CallMetricsRepository;
  /** Days the per-minute counters are kept (TOOL_METRICS_RETENTION_DAYS); absent: never pruned. */
  readonly retentionDays?: number;
  /** Logs the pruning; required with `retentionDays`. */
  readonly logger?: Logger;
}

/** How often old counters and receipts are deleted. */
export const METRICS_PRUNE_INTERVAL_MS = 3_600_000;

const DAY_MS = 86_400_000;

/** Creates the repositories (and their indexes) and the handlers, and starts the pruning. */
export async function createToolsModule(deps: ToolsModuleDeps): Promise<ToolsModule> {
  const { store, host, retentionDays, logger } = deps;
  const [policies, metrics] = await Promise.all([
    createApprovalPolicyRepository(store),
    deps.metrics ?? createCallMetricsRepository(store),
  ]);
  const pruner =
    retentionDays === undefined || logger === undefined
      ? undefined
      : startPeriodic(
          async () => {
            const deleted = await metrics.prune(Date.now() - retentionDays * DAY_MS);
            if (deleted.buckets + deleted.receipts > 0) logger.info(deleted, 'old tool call counters deleted');
          },
          { name: 'tool-metrics-pruner', intervalMs: METRICS_PRUNE_INTERVAL_MS, logger, runAtStart: true },
        );
  const catalogue = { host, policies };
  return {
    policies,
    metrics,
    handlers: { ...createToolCatalogueHandlers(catalogue), ...createToolMetricsHandlers({ ...catalogue, metrics }) },
    internalHandlers: [createToolsCatalogueHandler(catalogue), createRecordCallsHandler(metrics)],
    stop: async () => {
      await pruner?.stop();
    },
  };
}
