import { PROTOCOL_VERSION, PauseListRequest } from '@ars/contracts';
import type { PauseListResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { Filter } from '@ars/store';
import type { PauseRecord } from '../domain/pause.ts';
import { toPausedRunView } from '../domain/pause.ts';
import { listScope, scopeFilter } from '../domain/read-scope.ts';
import type { ApiDeps } from './deps.ts';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';
import { pageViews, readBudget } from './reply-budget.ts';
import { readSnapshotSequence } from './snapshot-sequence.ts';
import { withCursor } from './tasks-read.handler.ts';

/**
 * `pause.list` (R, XA): the runs currently parked (pause records with no
 * `resolved_at`), oldest request first, in the caller's scope: the verified
 * (tenant, user, session), narrowed by `filter.task_id`; an admin fans in
 * with `filter.tenant_ids`. Resuming is only done through
 * resume/approve/reject. Carries `sequence` (see `readSnapshotSequence`).
 * Pages end by size too, as those of `tasks.list` do.
 */
export function createPauseListHandler(deps: ApiDeps): RpcHandler {
  return typedMethod(PauseListRequest, async ({ method, identity, body: request }): Promise<PauseListResponse> => {
    reconcileIdentity(method, identity, request.identity);
    const scope = listScope(identity, request.filter?.tenant_ids);
    const taskId = request.filter?.task_id;
    const filter = {
      ...scopeFilter(scope),
      ...(taskId === undefined ? {} : { task_id: taskId }),
    } as Filter<PauseRecord>;
    const maxBytes = readBudget(deps);
    const views = pageViews(toPausedRunView);
    const sequence = await readSnapshotSequence(deps.bus);
    const page = await withCursor(() =>
      deps.tasks.listOpenPauses(filter, {
        limit: request.limit,
        cursor: request.cursor,
        budget: views.budget(maxBytes),
      }),
    );
    return {
      items: page.items.map(views.view),
      ...(page.next_cursor === null ? {} : { next_cursor: page.next_cursor }),
      sequence,
      protocol_version: PROTOCOL_VERSION,
    };
  });
}
