import { z } from 'zod';
import { JsonObject, Timestamp, record } from './common.ts';
import { FlowBudget } from './flow-definition.ts';

/** Whether a flow's file loaded: `invalid` flows are listed with their problems and cannot run. */
export const FLOW_STATUSES = ['valid', 'invalid'] as const;

/** A flow: a named, versioned composition of agent runs, defined by a file of its tenant. */
export const Flow = record({
  flow_id: z.string(),
  name: z.string(),
  description: z.string().optional(),
  tenant: z.string(),
  agent_id: z.string().optional(),
  input_schema: JsonObject.optional(),
  created_at: Timestamp.optional(),
  updated_at: Timestamp.optional(),
  version: z.string().optional().describe("the definition's content hash: each distinct content is a version"),
  status: z.enum(FLOW_STATUSES).optional(),
  problems: z.array(z.string()).optional().describe('why the file did not load (status invalid)'),
  budget: FlowBudget.optional(),
  steps: z.array(JsonObject).optional().describe("the definition's steps, as loaded"),
});
export type Flow = z.infer<typeof Flow>;

/** What a flow run consumed so far: the budget axes. */
export const FlowUsage = record({
  tokens: z.int().nonnegative(),
  cost_usd: z.number().nonnegative(),
  steps: z.int().nonnegative().describe('child runs spawned'),
  wall_time_ms: z.int().nonnegative(),
});
export type FlowUsage = z.infer<typeof FlowUsage>;

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
  flow_version: z.string().optional(),
  idempotency_key: z.string().optional(),
  usage: FlowUsage.optional(),
  budget: FlowBudget.optional(),
  answer: z.string().optional().describe("the flow's answer: its last completed step's"),
});
export type FlowRun = z.infer<typeof FlowRun>;

/** A step's state in a flow run. */
export const FLOW_STEP_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled', 'skipped'] as const;

/** One step of a flow run: its state, its child runs and its result. */
export const FlowStepState = record({
  step_id: z.string(),
  type: z.string(),
  status: z.enum(FLOW_STEP_STATUSES),
  child_task_ids: z.array(z.string()),
  answer: z.string().optional(),
  answers: z.array(z.string()).optional().describe("a parallel step's answers, by branch"),
  error_code: z.string().optional(),
  next: z.string().optional().describe("a branch step's choice: a step id, $end or $fail"),
  started_at: Timestamp.optional(),
  ended_at: Timestamp.optional(),
});
export type FlowStepState = z.infer<typeof FlowStepState>;

/** Aggregated figures of one flow; latencies in milliseconds. */
export const FlowMetricsEntry = record({
  flow_id: z.string(),
  tenant: z.string().optional(),
  runs: z.int().nonnegative(),
  completed: z.int().nonnegative(),
  failed: z.int().nonnegative(),
  cancelled: z.int().nonnegative(),
  running: z.int().nonnegative().optional(),
  p50_ms: z.number().nonnegative().optional(),
  p99_ms: z.number().nonnegative().optional(),
  mean_ms: z.number().nonnegative().optional(),
  tokens: z.int().nonnegative().optional(),
  cost: z.number().nonnegative().optional(),
});
export type FlowMetricsEntry = z.infer<typeof FlowMetricsEntry>;
