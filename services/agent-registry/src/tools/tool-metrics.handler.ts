import { isServiceError, ServiceError, ToolMetricsRequest, ToolContentStatsRequest } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';
import type { CallMetricsRepository, MinuteWindow } from './call-metrics.repository.ts';
import { findTool } from './catalogue.ts';
import { contentStatsEntry, emptyTotals, metricsEntry, sumByTool } from './tool-metrics.ts';
import type { ToolTotals } from './tool-metrics.ts';
import { loadCatalogue } from './tools.handler.ts';
import type { ToolCatalogueDeps } from './tools.handler.ts';

/** What the metrics handlers need. */
export interface ToolMetricsDeps extends ToolCatalogueDeps {
  readonly metrics: CallMetricsRepository;
}

type StatsRequest = ToolMetricsRequest | ToolContentStatsRequest;

/** The request's window in epoch ms; `since` after `until` is 400 `invalid_request`. */
function windowOf(method: string, request: StatsRequest): MinuteWindow {
  const since = request.since === undefined ? undefined : Date.parse(request.since);
  const until = request.until === undefined ? undefined : Date.parse(request.until);
  if (since !== undefined && until !== undefined && since > until) {
    throw new ServiceError('invalid_request', `${method}: since is after until`);
  }
  return { since, until };
}

/**
 * A tool named without a call in the window answers zeros when the catalogue
 * knows it (or its MCP server cannot list its tools now); an unknown name is
 * 404 `not_found`.
 */
async function requireKnown(deps: ToolMetricsDeps, caller: VerifiedIdentity, name: string): Promise<void> {
  try {
    findTool(await loadCatalogue(deps, caller), name);
  } catch (error) {
    if (!(isServiceError(error) && error.code === 'unavailable')) throw error;
  }
}

/**
 * The totals per tool over the request's window, from the recorded
 * calls: every tool with a call in the window, or the named tool alone.
 * Windows resolve to whole minutes: a minute counts when it overlaps the window.
 */
async function totalsOf(
  deps: ToolMetricsDeps,
  method: string,
  identity: VerifiedIdentity,
  body: StatsRequest,
): Promise<ToolTotals[]> {
  reconcileIdentity(method, identity, body.identity);
  const window = windowOf(method, body);
  const totals = sumByTool(await deps.metrics.buckets(identity.tenant, window, body.name));
  if (body.name === undefined || totals.length > 0) return totals;
  await requireKnown(deps, identity, body.name);
  return [emptyTotals(body.name)];
}

const windowEcho = (body: StatsRequest) => ({
  ...(body.since === undefined ? {} : { since: body.since }),
  ...(body.until === undefined ? {} : { until: body.until }),
});

/** tools.metrics and tools.content_stats, computed from the calls `_tools.record_calls` recorded. */
export function createToolMetricsHandlers(deps: ToolMetricsDeps): Record<string, RpcHandler> {
  return {
    'tools.metrics': typedMethod(ToolMetricsRequest, async ({ method, identity, body: request }) => {
      const totals = await totalsOf(deps, method, identity, request);
      return { ...windowEcho(request), items: totals.map(metricsEntry) };
    }),
    'tools.content_stats': typedMethod(ToolContentStatsRequest, async ({ method, identity, body: request }) => {
      const totals = await totalsOf(deps, method, identity, request);
      return { ...windowEcho(request), items: totals.map(contentStatsEntry) };
    }),
  };
}
