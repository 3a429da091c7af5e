import { z } from 'zod';
import { JsonObject, Timestamp, record } from './common.ts';

/** Side-effect classes of a tool: decides what a redelivered run may repeat. */
export const SIDE_EFFECT_CLASSES = ['read_only', 'idempotent', 'unsafe'] as const;
export const SideEffectClass = z.enum(SIDE_EFFECT_CLASSES);
export type SideEffectClass = z.infer<typeof SideEffectClass>;

/**
 * A tool's approval policy. `always` pauses the run for human approval before
 * each call; `timeout_seconds` ends the wait with `on_timeout`.
 */
export const ApprovalPolicy = z.strictObject({
  mode: z.enum(['never', 'always']),
  timeout_seconds: z.int().min(1).max(604_800).optional().describe('absent: wait indefinitely'),
  on_timeout: z.enum(['reject', 'approve']).default('reject'),
});
export type ApprovalPolicy = z.infer<typeof ApprovalPolicy>;

/** A tool as listed. `source` is `builtin` or the MCP server id. */
export const Tool = record({
  name: z.string(),
  description: z.string(),
  transport: z.string().describe('builtin | mcp'),
  source: z.string(),
  side_effect: SideEffectClass,
  approval_policy: ApprovalPolicy,
  tags: z.array(z.string()),
  enabled: z.boolean(),
  input_schema: JsonObject.describe('JSON Schema of the arguments'),
});
export type Tool = z.infer<typeof Tool>;

/** A tool's full manifest (tools.describe). */
export const ToolManifest = record({
  name: z.string(),
  description: z.string(),
  transport: z.string(),
  source: z.string(),
  side_effect: SideEffectClass,
  approval_policy: ApprovalPolicy,
  tags: z.array(z.string()),
  input_schema: JsonObject,
  output_schema: JsonObject.optional(),
  oauth: record({ provider_name: z.string(), scopes: z.array(z.string()) }).optional(),
  version: z.string().optional(),
});
export type ToolManifest = z.infer<typeof ToolManifest>;

/** Content statistics of one tool. */
export const ToolContentStatsEntry = record({
  tool: z.string(),
  invocations: z.int().nonnegative(),
  bytes_in: z.int().nonnegative(),
  bytes_out: z.int().nonnegative(),
  artifacts_offloaded: z.int().nonnegative(),
});

/** Call metrics of one tool; latencies in milliseconds. */
export const ToolMetricsEntry = record({
  tool: z.string(),
  invocations: z.int().nonnegative(),
  failures: z.int().nonnegative(),
  invalid_args: z.int().nonnegative(),
  approvals_requested: z.int().nonnegative(),
  p50_ms: z.number().nonnegative(),
  p95_ms: z.number().nonnegative(),
  p99_ms: z.number().nonnegative(),
});

/** Time window echoed by tool statistics. */
export const StatsWindow = { since: Timestamp.optional(), until: Timestamp.optional() };

export type ToolContentStatsEntry = z.infer<typeof ToolContentStatsEntry>;
export type ToolMetricsEntry = z.infer<typeof ToolMetricsEntry>;
