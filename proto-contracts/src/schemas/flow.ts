import { z } from 'zod';
import { JsonObject, Timestamp, record } from './common.ts';

/** A flow: a named, reusable run recipe of a tenant. */
export const Flow = record({
  flow_id: z.string(),
  name: z.string(),
  description: z.string().optional(),
  tenant: z.string(),
  agent_id: z.string().optional(),
  input_schema: JsonObject.optional(),
  created_at: Timestamp.optional(),
  updated_at: Timestamp.optional(),
});
export type Flow = z.infer<typeof Flow>;

/** One invocation of a flow. `status` uses the task status values. */
export const FlowRun = record({
  run_id: z.string(),
  flow_id: z.string(),
  status: z.string(),
  task_id: z.string().optional(),
  tenant: z.string(),
  user: z.string(),
  session: z.string(),
  started_at: Timestamp,
  ended_at: Timestamp.optional(),
  error_code: z.string().optional(),
});
export type FlowRun = z.infer<typeof FlowRun>;

/** Aggregated figures of one flow; latencies in milliseconds. */
export const FlowMetricsEntry = record({
  flow_id: z.string(),
  runs: z.int().nonnegative(),
  completed: z.int().nonnegative(),
  failed: z.int().nonnegative(),
  cancelled: z.int().nonnegative(),
  p50_ms: z.number().nonnegative().optional(),
  p99_ms: z.number().nonnegative().optional(),
  cost: z.number().nonnegative().optional(),
});
export type FlowMetricsEntry = z.infer<typeof FlowMetricsEntry>;
