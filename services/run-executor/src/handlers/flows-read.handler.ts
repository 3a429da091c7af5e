import {
  FlowDescribeRequest,
  FlowListRequest,
  FlowMetricsRequest,
  FlowRunDescribeRequest,
  FlowRunsListRequest,
  ServiceError,
} from '@ars/contracts';
import type {
  FlowDescription,
  FlowListResponse,
  FlowMetrics,
  FlowMetricsEntry,
  FlowRunDescription,
  FlowRunsListResponse,
  VerifiedIdentity,
} from '@ars/contracts';
import { foldTenantFanIn, isAdmin } from '@ars/auth';
import type { RpcHandler } from '@ars/bus';
import { pageOf, reconcileIdentity, typedMethod } from '@ars/service-kit';
import type { Filter } from '@ars/store';
import type { CatalogFlow } from '../flows/catalog.ts';
import type { FlowRunRecord } from '../flows/flow-run.repository.ts';
import { flowRunView, flowStepView, flowView } from '../flows/views.ts';
import type { ApiDeps } from './deps.ts';
import type { FlowApi } from './flows-run.handler.ts';

/**
 * The flows.* reads. Flows are a tenant's (its files); runs are read in the
 * caller's tenant (the body identity, reconciled). `flows.list` and
 * `flows.runs.list` fan in across tenants with `filter.tenant_ids` (admin
 * only; `console:fleet` is not consulted). An admin's `flows.describe`
 * lists the runs of that flow id in every tenant, its `flows.metrics`
 * covers every tenant, and its `flows.runs.describe` reads any tenant's
 * run. Each read publishes `flows.page_viewed` (AdminScoped: the admin
 * claim widened what it read).
 */

/** Runs `flows.describe` shows. */
const RECENT_RUNS = 20;
/** Most flow runs one `flows.metrics` read aggregates (the newest of its window). */
export const FLOW_METRICS_SCAN_LIMIT = 10_000;

async function pageViewed(
  deps: ApiDeps,
  caller: VerifiedIdentity,
  method: string,
  flowId: string,
  adminScoped: boolean,
): Promise<void> {
  await deps.publisher
    .publish({
      type: 'flows.page_viewed',
      identity: { tenant: caller.tenant, user: caller.user, session: caller.session },
      payload: { Method: method, FlowID: flowId, AdminScoped: adminScoped },
    })
    .catch((error: unknown) => deps.logger.warn({ err: error, method }, 'flows.page_viewed not published'));
}

function encodeCursor(flow: CatalogFlow): string {
  return Buffer.from(JSON.stringify([flow.tenant, flow.flow_id])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'string')) {
      return value as [string, string];
    }
  } catch {
    // Not base64url JSON: refused below like any other foreign cursor.
  }
  throw new ServiceError('invalid_request', 'flows.list: cursor is not a next_cursor of this read');
}

const after = (flow: CatalogFlow, [tenant, flowId]: [string, string]) =>
  flow.tenant > tenant || (flow.tenant === tenant && flow.flow_id > flowId);

function matchesText(flow: CatalogFlow, text: string | undefined): boolean {
  if (text === undefined) return true;
  const needle = text.toLowerCase();
  return [flow.flow_id, flow.definition?.name ?? '', flow.definition?.description ?? ''].some((s) =>
    s.toLowerCase().includes(needle),
  );
}

function listFlows(deps: ApiDeps, flows: FlowApi): RpcHandler {
  return typedMethod(FlowListRequest, async ({ method, identity, body }): Promise<FlowListResponse> => {
    const target = reconcileIdentity(method, identity, body.identity);
    const fanIn = foldTenantFanIn(identity, body.filter?.tenant_ids);
    const position = body.cursor === undefined ? undefined : decodeCursor(body.cursor);
    const all = flows.catalog
      .list(fanIn ?? [target.tenant])
      .filter((f) => matchesText(f, body.filter?.text) && (position === undefined || after(f, position)));
    const page = all.slice(0, body.limit);
    const last = page.at(-1);
    await pageViewed(deps, identity, method, '', fanIn !== undefined);
    return {
      items: page.map(flowView),
      ...(all.length > page.length && last !== undefined ? { next_cursor: encodeCursor(last) } : {}),
    };
  });
}

function describeFlow(deps: ApiDeps, flows: FlowApi): RpcHandler {
  return typedMethod(FlowDescribeRequest, async ({ method, identity, body }): Promise<FlowDescription> => {
    const target = reconcileIdentity(method, identity, body.identity);
    const flow = flows.catalog.get(target.tenant, body.flow_id);
    if (flow === undefined) throw new ServiceError('not_found', `no flow ${body.flow_id} in tenant ${target.tenant}`);
    const admin = isAdmin(identity.scopes);
    const filter: Filter<FlowRunRecord> = admin
      ? { flow_id: body.flow_id }
      : { tenant: target.tenant, flow_id: body.flow_id };
    const runs = await flows.flowRuns.find(filter, { limit: RECENT_RUNS });
    await pageViewed(deps, identity, method, body.flow_id, admin);
    return { flow: flowView(flow), recent_runs: runs.map(flowRunView) };
  });
}

function windowFilter(since: string | undefined, until: string | undefined): Filter<FlowRunRecord> {
  if (since === undefined && until === undefined) return {};
  return {
    started_at: {
      ...(since === undefined ? {} : { $gte: new Date(since).toISOString() }),
      ...(until === undefined ? {} : { $lt: new Date(until).toISOString() }),
    },
  };
}

function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** One flow's figures from its runs. */
export function metricsEntry(runs: readonly FlowRunRecord[]): FlowMetricsEntry {
  const first = runs[0];
  const count = (status: string) => runs.filter((r) => r.status === status).length;
  const durations = runs
    .filter((r) => r.ended_at !== undefined)
    .map((r) => Date.parse(r.ended_at ?? '') - Date.parse(r.started_at))
    .sort((a, b) => a - b);
  const p50 = percentile(durations, 50);
  const p99 = percentile(durations, 99);
  return {
    flow_id: first?.flow_id ?? '',
    tenant: first?.tenant ?? '',
    runs: runs.length,
    completed: count('complete'),
    failed: count('failed'),
    cancelled: count('cancelled'),
    running: count('running') + count('pending'),
    ...(p50 === undefined ? {} : { p50_ms: p50 }),
    ...(p99 === undefined ? {} : { p99_ms: p99 }),
    ...(durations.length === 0 ? {} : { mean_ms: durations.reduce((a, b) => a + b, 0) / durations.length }),
    tokens: runs.reduce((sum, r) => sum + r.usage.tokens, 0),
    cost: runs.reduce((sum, r) => sum + r.usage.cost_usd, 0),
  };
}

function flowMetrics(deps: ApiDeps, flows: FlowApi): RpcHandler {
  return typedMethod(FlowMetricsRequest, async ({ method, identity, body }): Promise<FlowMetrics> => {
    const target = reconcileIdentity(method, identity, body.identity);
    const admin = isAdmin(identity.scopes);
    const filter: Filter<FlowRunRecord> = {
      ...(admin ? {} : { tenant: target.tenant }),
      ...(body.flow_id === undefined ? {} : { flow_id: body.flow_id }),
      ...windowFilter(body.since, body.until),
    };
    const runs = await flows.flowRuns.find(filter, { limit: FLOW_METRICS_SCAN_LIMIT });
    const byFlow = new Map<string, FlowRunRecord[]>();
    for (const run of runs) {
      const key = JSON.stringify([run.tenant, run.flow_id]);
      byFlow.set(key, [...(byFlow.get(key) ?? []), run]);
    }
    const items = [...byFlow.keys()].sort().map((key) => metricsEntry(byFlow.get(key) ?? []));
    await pageViewed(deps, identity, method, body.flow_id ?? '', admin);
    return {
      ...(body.since === undefined ? {} : { since: body.since }),
      ...(body.until === undefined ? {} : { until: body.until }),
      items,
    };
  });
}

function listRuns(deps: ApiDeps, flows: FlowApi): RpcHandler {
  return typedMethod(FlowRunsListRequest, async ({ method, identity, body }): Promise<FlowRunsListResponse> => {
    const target = reconcileIdentity(method, identity, body.identity);
    const f = body.filter;
    const fanIn = foldTenantFanIn(identity, f?.tenant_ids);
    const filter: Filter<FlowRunRecord> = {
      tenant: { $in: [...(fanIn ?? [target.tenant])] },
      ...(f?.flow_id === undefined ? {} : { flow_id: f.flow_id }),
      ...(f?.status === undefined ? {} : { status: { $in: f.status as FlowRunRecord['status'][] } }),
      ...windowFilter(f?.since, f?.until),
    };
    const page = await pageOf(
      flows.flowRuns.collection,
      filter,
      {
        sortField: 'started_at',
        direction: 'desc',
        after: body.cursor,
        limit: body.limit,
        sortValueAlways: true,
      },
      method,
    );
    await pageViewed(deps, identity, method, f?.flow_id ?? '', fanIn !== undefined);
    return {
      items: page.items.map(flowRunView),
      ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
    };
  });
}

function describeRun(deps: ApiDeps, flows: FlowApi): RpcHandler {
  return typedMethod(FlowRunDescribeRequest, async ({ method, identity, body }): Promise<FlowRunDescription> => {
    const target = reconcileIdentity(method, identity, body.identity);
    const run = await flows.flowRuns.get(body.run_id);
    // Another tenant's run is as absent as a missing one, unless the caller is an admin.
    if (run === null || (run.tenant !== target.tenant && !isAdmin(identity.scopes))) {
      throw new ServiceError('not_found', `no flow run ${body.run_id}`);
    }
    await pageViewed(deps, identity, method, run.flow_id, run.tenant !== target.tenant);
    return { run: flowRunView(run), steps: run.steps.map(flowStepView) };
  });
}

/** `flows.list`, `flows.describe`, `flows.metrics`, `flows.runs.list`, `flows.runs.describe`. */
export function createFlowReadHandlers(deps: ApiDeps, flows: FlowApi): Record<string, RpcHandler> {
  return {
    'flows.list': listFlows(deps, flows),
    'flows.describe': describeFlow(deps, flows),
    'flows.metrics': flowMetrics(deps, flows),
    'flows.runs.list': listRuns(deps, flows),
    'flows.runs.describe': describeRun(deps, flows),
  };
}
