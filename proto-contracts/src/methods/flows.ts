import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import {
  Id,
  JsonObject,
  filterList,
  pageOf,
  pageRequest,
  record,
  requestOf,
  timeWindow,
  Timestamp,
} from '../schemas/common.ts';
import { Flow, FlowMetricsEntry, FlowRun, FlowStepState } from '../schemas/flow.ts';
import { onFamily } from './routing.ts';

/** flows.describe: one flow and its recent runs (tenant-scoped; admin widens run visibility). */
export const FlowDescribeRequest = requestOf({ flow_id: Id });
export type FlowDescribeRequest = z.infer<typeof FlowDescribeRequest>;

/** A flow and its most recent runs. */
export const FlowDescription = record({ flow: Flow, recent_runs: z.array(FlowRun) });
export type FlowDescription = z.infer<typeof FlowDescription>;

/** flows.list: the tenant's flows; `filter.tenant_ids` is the admin fan-in (XA). */
export const FlowListRequest = requestOf({
  filter: z
    .strictObject({ tenant_ids: filterList(Id).optional(), text: z.string().min(1).max(1024).optional() })
    .optional(),
  ...pageRequest,
});
export type FlowListRequest = z.infer<typeof FlowListRequest>;

/** A page of flows. */
export const FlowListResponse = record({ ...pageOf(Flow) });
export type FlowListResponse = z.infer<typeof FlowListResponse>;

/** flows.metrics: per-flow figures over a window (tenant-scoped; admin widens). */
export const FlowMetricsRequest = requestOf({ flow_id: Id.optional(), ...timeWindow });
export type FlowMetricsRequest = z.infer<typeof FlowMetricsRequest>;

/** Per-flow figures. */
export const FlowMetrics = record({
  since: Timestamp.optional(),
  until: Timestamp.optional(),
  items: z.array(FlowMetricsEntry),
});
export type FlowMetrics = z.infer<typeof FlowMetrics>;

/** flows.run (admin): invoke a flow. */
export const FlowRunRequest = requestOf({
  flow_id: Id,
  input: JsonObject.optional().describe("the flow's input, checked against its input_schema"),
  idempotency_key: z.string().min(1).max(256).optional(),
});
export type FlowRunRequest = z.infer<typeof FlowRunRequest>;

/** The flow run started. */
export const FlowRunResponse = record({ run_id: z.string(), flow_id: z.string(), task_id: z.string().optional() });
export type FlowRunResponse = z.infer<typeof FlowRunResponse>;

/** flows.runs.describe: one flow run (tenant-scoped; admin widens). */
export const FlowRunDescribeRequest = requestOf({ run_id: Id });
export type FlowRunDescribeRequest = z.infer<typeof FlowRunDescribeRequest>;

/** A flow run and its steps. */
export const FlowRunDescription = record({ run: FlowRun, steps: z.array(FlowStepState).optional() });
export type FlowRunDescription = z.infer<typeof FlowRunDescription>;

/** flows.runs.list: flow runs; `filter.tenant_ids` is the admin fan-in (XA). */
export const FlowRunsListRequest = requestOf({
  filter: z
    .strictObject({
      flow_id: Id.optional(),
      status: filterList(z.string().min(1)).optional(),
      tenant_ids: filterList(Id).optional(),
      ...timeWindow,
    })
    .optional(),
  ...pageRequest,
});
export type FlowRunsListRequest = z.infer<typeof FlowRunsListRequest>;

/** A page of flow runs, newest first. */
export const FlowRunsListResponse = record({ ...pageOf(FlowRun) });
export type FlowRunsListResponse = z.infer<typeof FlowRunsListResponse>;

const row = (
  name: string,
  auth: MethodDef['auth'],
  requestName: string,
  responseName: string,
  request: z.ZodType,
  response: z.ZodType,
  summary: string,
): MethodDef =>
  defineMethod({
    name,
    family: 'flows',
    ...onFamily(name),
    service: 'run-executor',
    auth,
    requestName,
    responseName,
    request,
    response,
    summary,
  });

/** Flow methods (run-executor): `/v1/flows/<name>`, `/v1/flows/runs/<name>`. */
export const FLOW_METHODS: readonly MethodDef[] = [
  row(
    'flows.describe',
    ['R'],
    'FlowDescribeRequest',
    'FlowDescription',
    FlowDescribeRequest,
    FlowDescription,
    'Describe a flow and its recent runs.',
  ),
  row(
    'flows.list',
    ['R', 'XA'],
    'FlowListRequest',
    'FlowListResponse',
    FlowListRequest,
    FlowListResponse,
    "List the tenant's flows.",
  ),
  row(
    'flows.metrics',
    ['R'],
    'FlowMetricsRequest',
    'FlowMetrics',
    FlowMetricsRequest,
    FlowMetrics,
    'Per-flow run figures.',
  ),
  row(
    'flows.run',
    ['M', 'A'],
    'FlowRunRequest',
    'FlowRunResponse',
    FlowRunRequest,
    FlowRunResponse,
    'Invoke a flow (admin).',
  ),
  row(
    'flows.runs.describe',
    ['R'],
    'FlowRunDescribeRequest',
    'FlowRunDescription',
    FlowRunDescribeRequest,
    FlowRunDescription,
    'Describe one flow run.',
  ),
  row(
    'flows.runs.list',
    ['R', 'XA'],
    'FlowRunsListRequest',
    'FlowRunsListResponse',
    FlowRunsListRequest,
    FlowRunsListResponse,
    'List flow runs.',
  ),
];
