import { FlowRunRequest, ServiceError } from '@ars/contracts';
import type { FlowDefinition, FlowRunResponse } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { reconcileIdentity, requireAdmin, typedMethod } from '@ars/service-kit';
import { idempotencyScope, newTaskRecord } from '../domain/start.ts';
import type { Triple } from '../domain/start.ts';
import { newTaskId } from '../domain/task-id.ts';
import { announceRun } from '../engine/announce.ts';
import type { FlowCatalog } from '../flows/catalog.ts';
import type { FlowRunRecord, FlowRunRepository } from '../flows/flow-run.repository.ts';
import { FLOW_TASK_KIND } from '../flows/progress.ts';
import { missingInputs } from '../flows/template.ts';
import { createArgsValidators } from '../tools/json-schema-args.ts';
import type { ApiDeps } from './deps.ts';

/** What the flows.* handlers read besides the API deps: the flow files and the flow runs. */
export interface FlowApi {
  readonly catalog: FlowCatalog;
  readonly flowRuns: FlowRunRepository;
}

/** The parent task's idempotency key: a retried or resumed `flows.run` finds the parent it inserted. */
export function parentTaskKey(runId: string): string {
  return `flow-run:${runId}`;
}

function newFlowRun(
  triple: Triple,
  flow: { tenant: string; flow_id: string; version: string; definition: FlowDefinition },
  input: Record<string, unknown>,
  key: string | undefined,
): FlowRunRecord {
  const at = new Date().toISOString();
  const runId = newTaskId();
  const { definition } = flow;
  return {
    _id: runId,
    run_id: runId,
    flow_id: flow.flow_id,
    flow_name: definition.name ?? flow.flow_id,
    flow_version: flow.version,
    tenant: triple.tenant,
    user: triple.user,
    session: triple.session,
    task_id: newTaskId(),
    ...(key === undefined ? {} : { idempotency_key: key, idempotency_scope: idempotencyScope(triple, key) }),
    definition_json: JSON.stringify(definition),
    input_json: JSON.stringify(input),
    status: 'pending',
    cursor: 0,
    steps: definition.steps.map((s) => ({
      step_id: s.id,
      type: s.type,
      status: 'pending',
      attempt: 1,
      child_task_ids: [],
    })),
    usage: { tokens: 0, cost_usd: 0, steps: 0, wall_time_ms: 0 },
    created_at: at,
    started_at: at,
    updated_at: at,
  };
}

/**
 * `flows.run` (M, A): starts a flow of the target tenant as the target
 * triple (the verified one, or an admin's impersonation). Refusals: 403
 * without admin; 404 for a flow the tenant has no file of; 409 `conflict`
 * for a flow whose file did not load; 400 for input its `input_schema`
 * refuses or without a value a template names. Idempotent by
 * `idempotency_key` in the triple (the same key answers the first run).
 * The flow run record is inserted first, then its parent task (kind
 * `flow`, keyed by the run), then the parent is announced like a start and
 * `flows.run_invoked` published (fixed id): a retry after a crash anywhere
 * completes what the first call left undone.
 */
export function createFlowRunHandler(deps: ApiDeps, flows: FlowApi): RpcHandler {
  const validators = createArgsValidators({
    onCompileError: (tenant, flowId, error) =>
      deps.logger.warn({ err: error, tenant, flowId }, 'flow input_schema not compiled; input is checked as an object'),
  });
  return typedMethod(FlowRunRequest, async ({ method, identity, body }): Promise<FlowRunResponse> => {
    const target = reconcileIdentity(method, identity, body.identity);
    requireAdmin(method, identity);
    const triple: Triple = { tenant: target.tenant, user: target.user, session: target.session };
    const flow = flows.catalog.get(triple.tenant, body.flow_id);
    if (flow === undefined) throw new ServiceError('not_found', `no flow ${body.flow_id} in tenant ${triple.tenant}`);
    const key = body.idempotency_key;
    const existing =
      key === undefined
        ? null
        : await flows.flowRuns.collection.findOne({ idempotency_scope: idempotencyScope(triple, key) });
    if (existing !== null) return launch(deps, existing);
    const { definition } = flow;
    if (definition === undefined) {
      throw new ServiceError('conflict', `flow ${body.flow_id} did not load: ${(flow.problems ?? []).join('; ')}`);
    }
    const input = body.input ?? {};
    if (definition.input_schema !== undefined) {
      const problem = validators.checkFor(
        `flow:${flow.tenant}`,
        `${flow.flow_id}@${flow.version}`,
        definition.input_schema,
      )(input);
      if (problem !== undefined) throw new ServiceError('invalid_request', `input: ${problem}`);
    }
    const missing = missingInputs(definition, input);
    if (missing.length > 0)
      throw new ServiceError('invalid_request', `input: the flow's steps need ${missing.join(', ')}`);
    const { run } = await flows.flowRuns.insert(newFlowRun(triple, { ...flow, definition }, input, key));
    return launch(deps, run);
  });
}

/** Inserts (or finds) and announces the run's parent task; publishes `flows.run_invoked`. */
async function launch(deps: ApiDeps, run: FlowRunRecord): Promise<FlowRunResponse> {
  const triple = { tenant: run.tenant, user: run.user, session: run.session };
  const record = newTaskRecord({
    taskId: run.task_id,
    triple,
    request: {
      identity: {},
      query: `flow ${run.flow_id} (run ${run.run_id})`,
      idempotency_key: parentTaskKey(run.run_id),
    },
    agent: {},
    artifacts: [],
    now: run.created_at,
  });
  const { task } = await deps.tasks.insertTask({ ...record, kind: FLOW_TASK_KIND });
  if (task.status === 'pending' && task.spawned_sequence === undefined) await announceRun(deps, task);
  await deps.publisher.publish({
    type: 'flows.run_invoked',
    identity: { ...triple, run: run.task_id },
    eventId: `flows.run_invoked:${run.run_id}`,
    payload: { FlowID: run.flow_id, RunID: run.run_id },
  });
  return { run_id: run.run_id, flow_id: run.flow_id, task_id: run.task_id };
}
