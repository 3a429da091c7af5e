import { PROTOCOL_VERSION, ServiceError, TaskGetRequest, TaskListRequest } from '@ars/contracts';
import type { TaskDetail, TaskListResponse, TaskRef, VerifiedIdentity } from '@ars/contracts';
import { isAdmin } from '@ars/auth';
import type { ReconciledIdentity } from '@ars/auth';
import type { RpcHandler } from '@ars/bus';
import { isInvalidCursorError } from '@ars/store';
import type { Filter } from '@ars/store';
import { costRollup, costTotal } from '../domain/cost.ts';
import {
  listFilterInput,
  listScope,
  narrowsScope,
  scopeFilter,
  statusCounts,
  taskFilter,
} from '../domain/read-scope.ts';
import { abbreviateTask, jsonBytes } from '../domain/reply-size.ts';
import { toTaskView } from '../domain/task.ts';
import type { TaskRecord } from '../domain/task.ts';
import type { ApiDeps } from './deps.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';
import { pageViews, readBudget } from './reply-budget.ts';
import { readSnapshotSequence } from './snapshot-sequence.ts';

/** Maps a cursor the store refuses to `invalid_request`. */
export async function withCursor<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (isInvalidCursorError(error)) throw new ServiceError('invalid_request', 'cursor: not a cursor of this list');
    throw error;
  }
}

/**
 * Who may read a task by id. The caller whose verified (tenant, user,
 * session) is the task's (Authentication, two-part model rule 5: every
 * storage read filters by the full triple; send `X-Service-Session` to read
 * another conversation's turns), admins included. Beyond that only an admin
 * impersonating another tenant (`identity.tenant` naming it: reconciled, and
 * audited by the gateway) reads that tenant's tasks, of every user and
 * session. Anyone else, and a missing id, get the same `not_found`; an admin
 * who does not name the task's tenant too.
 */
function visible(caller: VerifiedIdentity, target: ReconciledIdentity, task: TaskRecord | null): task is TaskRecord {
  if (task === null) return false;
  if (task.tenant === caller.tenant && task.user === caller.user && task.session === caller.session) return true;
  return isAdmin(caller.scopes) && target.tenant !== caller.tenant && task.tenant === target.tenant;
}

/**
 * `tasks.get` → TaskDetail: the task row; the parent session
 * `{tenant, user, session_id}`; the parent task `{task_id, status}` when
 * there is one; the per-step cost rollup and its total; the trajectory by
 * reference — the run's events on the stream, `{kind: 'events', run,
 * from_sequence}` (`from_sequence` is the sequence of its `task.spawned`, 0
 * until known; replay with `X-Service-Run: <task_id>` and `Last-Event-ID:
 * from_sequence − 1`); and `sequence` (see `readSnapshotSequence` for what
 * it guarantees). Another tenant's id is `not_found` unless an admin names
 * that tenant in `identity.tenant` (see `visible`). A task too large for one
 * reply comes with `query` and `goal` abbreviated (`abbreviated` names them).
 */
function getTask(deps: ApiDeps): RpcHandler {
  return typedMethod(TaskGetRequest, async ({ method, identity, body: request }): Promise<TaskDetail> => {
    const target = reconcileIdentity(method, identity, request.identity);
    const { task_id: taskId } = request;
    const sequence = await readSnapshotSequence(deps.bus);
    const task = await deps.tasks.getTask(taskId);
    if (!visible(identity, target, task)) throw new ServiceError('not_found', `task ${taskId} not found`);
    let parent: TaskRef | undefined;
    if (task.parent_task_id !== undefined) {
      const found = await deps.tasks.getTask(task.parent_task_id);
      if (found !== null) parent = { task_id: found.task_id, status: found.status };
    }
    const rollup = costRollup(task.steps);
    const fromSequence = task.spawned_sequence ?? 0;
    const detail: TaskDetail = {
      task: toTaskView(task),
      parent_session: { tenant: task.tenant, user: task.user, session_id: task.session },
      ...(parent === undefined ? {} : { parent_task: parent }),
      cost_rollup: rollup,
      cost_total: costTotal(rollup),
      trajectory_ref: {
        ref: `events:${task.task_id}:${fromSequence}`,
        step_count: task.steps.length,
        kind: 'events',
        run: task.task_id,
        from_sequence: fromSequence,
      },
      sequence,
      protocol_version: PROTOCOL_VERSION,
    };
    // Only a row stored before the query bound can take a detail past the budget.
    return jsonBytes(detail) <= readBudget(deps) ? detail : { ...detail, task: abbreviateTask(detail.task) };
  });
}

/**
 * `tasks.list` (R, XA): newest first, cursor pagination, per-status
 * counters over the whole filter except `filter.status` (`counts_complete`
 * false when the embedded store stopped counting at its limit: each is
 * then a lower bound), and `sequence`.
 *
 * Scope: the caller's verified session (send `X-Service-Session: <id>` to
 * list that conversation's turns). To list every session of the caller use
 * `search.tasks` without `filter.session_ids` (it spans all the caller's
 * sessions); an admin fans in across tenants with `filter.tenant_ids` (every
 * user and session of those tenants; `console:fleet` is not consulted).
 * Filters: `status`, `kind`, `parent_task_id`, `since` (inclusive) /
 * `until` (exclusive) on `created_at`, and `text` (case-insensitive literal
 * over query and goal).
 *
 * A page holds `limit` tasks or fewer: it also ends before the task that
 * would take it past the reply budget (`next_cursor` then points at that
 * task), and a task too large for a reply on its own comes abbreviated
 * (`abbreviateTask`), so no page is ever too large for the bus. On the
 * embedded store a filtered page reads at most `EMBEDDED_PAGE_SCAN_LIMIT`
 * tasks of the scope: it may hold fewer, or none, with a `next_cursor`.
 */
function listTasks(deps: ApiDeps): RpcHandler {
  return typedMethod(TaskListRequest, async ({ method, identity, body: request }): Promise<TaskListResponse> => {
    reconcileIdentity(method, identity, request.identity);
    const scope = listScope(identity, request.filter?.tenant_ids);
    const input = listFilterInput(request.filter);
    const filter = taskFilter(scope, input) as Filter<TaskRecord>;
    const countInput = { ...input, status: undefined };
    const countFilter = taskFilter(scope, countInput) as Filter<TaskRecord>;
    const whole = scopeFilter(scope) as Filter<TaskRecord>;
    const maxBytes = readBudget(deps);
    const views = pageViews((task: TaskRecord) => toTaskView(task), { maxBytes, shorten: abbreviateTask });
    const sequence = await readSnapshotSequence(deps.bus);
    const [page, tally] = await Promise.all([
      withCursor(() =>
        deps.tasks.listTasks(filter, {
          limit: request.limit,
          cursor: request.cursor,
          budget: views.budget(maxBytes),
          ...(narrowsScope(input) ? { scope: whole } : {}),
        }),
      ),
      deps.tasks.countByStatus(countFilter, narrowsScope(countInput) ? whole : undefined),
    ]);
    return {
      items: page.items.map(views.view),
      ...(page.next_cursor === null ? {} : { next_cursor: page.next_cursor }),
      counts: statusCounts(tally.counts),
      counts_complete: tally.complete,
      sequence,
      protocol_version: PROTOCOL_VERSION,
    };
  });
}

/** `tasks.get` and `tasks.list`. */
export function createTaskReadHandlers(deps: ApiDeps): Record<string, RpcHandler> {
  return { 'tasks.get': getTask(deps), 'tasks.list': listTasks(deps) };
}
