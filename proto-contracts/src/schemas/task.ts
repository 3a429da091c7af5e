import { z } from 'zod';
import { Id, Timestamp, filterList, record, timeWindow } from './common.ts';

/** The six task status values. */
export const TASK_STATUSES = ['pending', 'running', 'paused', 'complete', 'failed', 'cancelled'] as const;
export const TaskStatus = z.enum(TASK_STATUSES).describe('task status');
export type TaskStatus = z.infer<typeof TaskStatus>;

/** Statuses after which a task never changes again. */
export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ['complete', 'failed', 'cancelled'];

/**
 * An input-artifact disposition hint: `ref`, `inline`, `provider_native` or
 * `tool:<name>`. The hint outranks the agent's multimodal configuration and
 * the runtime default.
 */
export const Disposition = z
  .string()
  .regex(/^(ref|inline|provider_native|tool:\S+)$/)
  .describe('ref | inline | provider_native | tool:<name>');
export type Disposition = z.infer<typeof Disposition>;

/** One input artifact of a task: its id and the disposition hint given at start (absent when none). */
export const InputArtifact = record({
  artifact_id: z.string(),
  disposition: Disposition.optional().describe('the hint given at start; absent when none was given'),
});
export type InputArtifact = z.infer<typeof InputArtifact>;

/** Per-status counters; every status is present, zero when none. */
export const StatusCounts = record({
  pending: z.int().nonnegative(),
  running: z.int().nonnegative(),
  paused: z.int().nonnegative(),
  complete: z.int().nonnegative(),
  failed: z.int().nonnegative(),
  cancelled: z.int().nonnegative(),
});
export type StatusCounts = z.infer<typeof StatusCounts>;

/** A task row: one run of an agent on a query. */
export const Task = record({
  task_id: z.string().describe('also the run id (identity.run of steering controls)'),
  status: TaskStatus,
  kind: z.string().describe('foreground (a turn of the session) or background'),
  tenant: z.string(),
  user: z.string(),
  session: z.string(),
  query: z.string().describe('the query given at start'),
  goal: z.string().describe('the current goal: the query until a redirect rewrites it'),
  priority: z.int(),
  parent_task_id: z.string().optional().describe('absent for a top-level task'),
  agent_id: z.string().optional().describe('present when the caller named an agent; absent means the default agent'),
  idempotency_key: z.string().optional(),
  input_artifacts: z.array(InputArtifact),
  background_acknowledged: z.boolean().describe('latches true once a background completion is acknowledged'),
  created_at: Timestamp,
  updated_at: Timestamp,
  started_at: Timestamp.optional(),
  ended_at: Timestamp.optional().describe('set when the task reaches a terminal status'),
  error_code: z.string().optional().describe('the ErrorCode of task.failed'),
  error_message: z.string().optional(),
  abbreviated: z
    .array(z.enum(['query', 'goal']))
    .optional()
    .describe(
      'members this reply shortened to their first 4096 characters because the row would not fit one reply ' +
        '(rows stored before the query bound); absent when every member is whole',
    ),
});
export type Task = z.infer<typeof Task>;

/** A reference to the session a task belongs to. */
export const SessionRef = record({ tenant: z.string(), user: z.string(), session_id: z.string() });
export type SessionRef = z.infer<typeof SessionRef>;

/** A reference to another task. */
export const TaskRef = record({ task_id: z.string(), status: TaskStatus });
export type TaskRef = z.infer<typeof TaskRef>;

/** The cost of one planner step. Token counts are integers; `cost` is in `currency` units. */
export const StepCost = record({
  step: z.int().min(1).describe('1-based planner step'),
  model: z.string(),
  input_tokens: z.int().nonnegative(),
  output_tokens: z.int().nonnegative(),
  cost: z.number().nonnegative(),
  currency: z.string().describe('ISO 4217 code, e.g. USD'),
});
export type StepCost = z.infer<typeof StepCost>;

/** The sum of a task's step costs. */
export const CostTotal = record({
  input_tokens: z.int().nonnegative(),
  output_tokens: z.int().nonnegative(),
  cost: z.number().nonnegative(),
  currency: z.string(),
});
export type CostTotal = z.infer<typeof CostTotal>;

/** The reasoning trajectory by reference: never inlined in TaskDetail. */
export const TrajectoryRef = record({
  ref: z.string().describe('opaque reference to the stored trajectory'),
  step_count: z.int().nonnegative(),
});
export type TrajectoryRef = z.infer<typeof TrajectoryRef>;

/** Filters of tasks.list. `tenant_ids` is the admin cross-tenant fan-in (XA). */
export const TaskListFilter = z.strictObject({
  status: filterList(TaskStatus).optional(),
  kind: filterList(z.string().min(1)).optional(),
  parent_task_id: Id.optional(),
  ...timeWindow,
  text: z.string().min(1).max(1024).optional().describe('free text matched against query and goal'),
  tenant_ids: filterList(Id).optional().describe('admin only: fan in across these tenants (every user and session)'),
});
export type TaskListFilter = z.infer<typeof TaskListFilter>;

/**
 * What a pause waits for: a resume (`pause`), a human decision on a tool call
 * (`approval`), or the user authorizing an OAuth-bound MCP server (`auth`).
 */
export const PAUSE_KINDS = ['pause', 'approval', 'auth'] as const;
export const PauseKind = z.enum(PAUSE_KINDS);
export type PauseKind = z.infer<typeof PauseKind>;

/** A run currently parked on a pause (for example awaiting human approval). */
export const PausedRun = record({
  token: z.string().describe('the pause token (pause.requested Token); approve/reject name it'),
  task_id: z.string(),
  reason: z.string(),
  kind: PauseKind.optional().describe('what the pause waits for (absent on records of older executors)'),
  tool: z
    .string()
    .optional()
    .describe('the tool awaiting approval (kind approval) or the MCP server id awaiting authorization (kind auth)'),
  authorize_url: z
    .string()
    .optional()
    .describe('kind auth: where the user authorizes (tool.auth_required AuthorizeURL of the current flow)'),
  requested_at: Timestamp,
  tenant: z.string(),
  user: z.string(),
  session: z.string(),
  tags: z.array(z.string()).optional(),
  args_summary: z.unknown().optional(),
  expires_at: Timestamp.optional().describe(
    'when the approval timeout (kind approval) or the authorization flow (kind auth) ends the wait, if there is one',
  ),
});
export type PausedRun = z.infer<typeof PausedRun>;

/** Filters of pause.list. */
export const PauseListFilter = z.strictObject({
  task_id: Id.optional(),
  tenant_ids: filterList(Id).optional().describe('admin only: fan in across these tenants'),
});
export type PauseListFilter = z.infer<typeof PauseListFilter>;
