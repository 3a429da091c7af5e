import { PROTOCOL_VERSION, SearchRequest } from '@ars/contracts';
import type { SearchHit, SearchResponse, Task } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { Filter } from '@ars/store';
import { narrowsScope, scopeFilter, searchScope, taskFilter } from '../domain/read-scope.ts';
import { abbreviateTask } from '../domain/reply-size.ts';
import { toTaskView } from '../domain/task.ts';
import type { TaskRecord } from '../domain/task.ts';
import type { ApiDeps } from './deps.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';
import { pageViews, readBudget } from './reply-budget.ts';
import { withCursor } from './tasks-read.handler.ts';

const SNIPPET_CHARS = 160;

/** The matching text around the first match, or the head of the query. */
function snippet(task: TaskRecord, query: string | undefined): string {
  const lower = query?.toLowerCase();
  for (const text of [task.query, task.goal]) {
    const at = lower === undefined ? -1 : text.toLowerCase().indexOf(lower);
    if (at >= 0) {
      const start = Math.max(0, at - SNIPPET_CHARS / 4);
      return text.slice(start, start + SNIPPET_CHARS);
    }
  }
  return task.query.slice(0, SNIPPET_CHARS);
}

function hit(task: TaskRecord, query: string | undefined): SearchHit {
  return {
    kind: 'task',
    id: task.task_id,
    tenant: task.tenant,
    user: task.user,
    session: task.session,
    title: task.query.slice(0, SNIPPET_CHARS),
    snippet: snippet(task, query),
    occurred_at: task.created_at,
    record: toTaskView(task),
  };
}

/**
 * `search.tasks` (R, X): tasks whose query or goal contains `query`
 * (case-insensitive literal; absent: every task), newest first, in the
 * folded search scope — `filter.tenant_ids` and `filter.user_ids` default to
 * the caller's own, `filter.session_ids` omitted spans every session of
 * theirs; naming others needs admin or console:fleet (403 `scope_mismatch`).
 * `filter.status`, `since` and `until` narrow; the other filter members
 * belong to other search methods and are ignored. Pages end by size too, as
 * those of `tasks.list` do: no page is too large for the bus; and, as
 * there, a page reads at most `EMBEDDED_PAGE_SCAN_LIMIT` tasks of the scope
 * on the embedded store, so it may hold fewer hits, or none, with a
 * `next_cursor`.
 */
export function createSearchTasksHandler(deps: ApiDeps): RpcHandler {
  return typedMethod(SearchRequest, async ({ method, identity, body: request }): Promise<SearchResponse> => {
    reconcileIdentity(method, identity, request.identity);
    const scope = searchScope(identity, request.filter);
    const input = {
      status: request.filter?.status,
      since: request.filter?.since,
      until: request.filter?.until,
      text: request.query,
    };
    const filter = taskFilter(scope, input) as Filter<TaskRecord>;
    const maxBytes = readBudget(deps);
    // A hit too large for a reply on its own carries its record abbreviated (its title and snippet are short).
    const views = pageViews((task: TaskRecord) => hit(task, request.query), {
      maxBytes,
      shorten: (found) => ({ ...found, record: abbreviateTask(found.record as Task) }),
    });
    const page = await withCursor(() =>
      deps.tasks.listTasks(filter, {
        limit: request.limit,
        cursor: request.cursor,
        budget: views.budget(maxBytes),
        ...(narrowsScope(input) ? { scope: scopeFilter(scope) as Filter<TaskRecord> } : {}),
      }),
    );
    return {
      items: page.items.map(views.view),
      ...(page.next_cursor === null ? {} : { next_cursor: page.next_cursor }),
      protocol_version: PROTOCOL_VERSION,
    };
  });
}
