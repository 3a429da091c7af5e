import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import { Id, Sequence, pageOf, pageRequest, requestOf, versioned } from '../schemas/common.ts';
import {
  CostTotal,
  PauseListFilter,
  PausedRun,
  SessionRef,
  StatusCounts,
  StepCost,
  Task,
  TaskListFilter,
  TaskRef,
  TrajectoryRef,
} from '../schemas/task.ts';
import { onBoth } from './routing.ts';

/**
 * tasks.get: one task by id, of the caller's own (tenant, user, session);
 * another tenant's id is `not_found`. An admin reads another tenant's task
 * only by naming that tenant in `identity.tenant` (admin impersonation,
 * audited at the edge); anyone else naming another tenant gets `not_found`.
 */
export const TaskGetRequest = requestOf({ task_id: Id.describe('the task (run) id') });
export type TaskGetRequest = z.infer<typeof TaskGetRequest>;

/** The task row, its parent references, the per-step cost rollup and the trajectory by reference. */
export const TaskDetail = versioned({
  task: Task,
  parent_session: SessionRef.describe('the session the task belongs to'),
  parent_task: TaskRef.optional().describe('absent for a top-level task'),
  cost_rollup: z.array(StepCost).describe('one entry per planner step that cost anything'),
  cost_total: CostTotal,
  trajectory_ref: TrajectoryRef,
  sequence: Sequence,
});
export type TaskDetail = z.infer<typeof TaskDetail>;

/** tasks.list: the caller's session by default; filters; cursor pagination. */
export const TaskListRequest = requestOf({
  filter: TaskListFilter.optional(),
  ...pageRequest,
});
export type TaskListRequest = z.infer<typeof TaskListRequest>;

/** A page of tasks with per-status counters over the whole filter (ignoring `filter.status`). */
export const TaskListResponse = versioned({
  ...pageOf(Task),
  counts: StatusCounts,
  counts_complete: z
    .boolean()
    .describe(
      "false when the embedded store counted only part of the tasks (at most 10,000; for a narrowing filter, among the scope's newest 10,000): each counter is then a lower bound",
    ),
  sequence: Sequence,
});
export type TaskListResponse = z.infer<typeof TaskListResponse>;

/** pause.list: runs currently paused in the caller's scope. */
export const PauseListRequest = requestOf({
  filter: PauseListFilter.optional(),
  ...pageRequest,
});
export type PauseListRequest = z.infer<typeof PauseListRequest>;

/** A page of paused runs; resuming is done only through resume/approve/reject. */
export const PauseListResponse = versioned({
  ...pageOf(PausedRun),
  sequence: Sequence,
});
export type PauseListResponse = z.infer<typeof PauseListResponse>;

/** Task reads (run-executor). No route shown by the spec: served on both route forms. */
export const TASK_METHODS: readonly MethodDef[] = [
  defineMethod({
    name: 'tasks.get',
    family: 'tasks',
    ...onBoth('tasks.get'),
    service: 'run-executor',
    auth: ['R'],
    crossing: { tenant: 'admin', refusal: 'not_found' },
    requestName: 'TaskGetRequest',
    responseName: 'TaskDetail',
    request: TaskGetRequest,
    response: TaskDetail,
    summary: 'Read one task with its parents, per-step cost rollup and trajectory reference.',
  }),
  defineMethod({
    name: 'tasks.list',
    family: 'tasks',
    ...onBoth('tasks.list'),
    service: 'run-executor',
    auth: ['R', 'XA'],
    requestName: 'TaskListRequest',
    responseName: 'TaskListResponse',
    request: TaskListRequest,
    response: TaskListResponse,
    summary: "List the session's tasks with filters, cursor pagination and per-status counters.",
  }),
  defineMethod({
    name: 'pause.list',
    family: 'tasks',
    ...onBoth('pause.list'),
    service: 'run-executor',
    auth: ['R', 'XA'],
    requestName: 'PauseListRequest',
    responseName: 'PauseListResponse',
    request: PauseListRequest,
    response: PauseListResponse,
    summary: 'List runs currently paused (for example awaiting human approval).',
  }),
];
