import type { Flow, FlowRun, FlowStepState } from '@ars/contracts';
import type { CatalogFlow } from './catalog.ts';
import type { FlowRunRecord, FlowStepRecord } from './flow-run.repository.ts';

/** The wire shapes of catalog flows and stored flow runs. */

/** A catalog flow on the wire: `status` valid with its definition's members, or invalid with its problems. */
export function flowView(flow: CatalogFlow): Flow {
  const d = flow.definition;
  const base = {
    flow_id: flow.flow_id,
    tenant: flow.tenant,
    version: flow.version,
    created_at: flow.loaded_at,
    updated_at: flow.updated_at,
  };
  if (d === undefined) return { ...base, name: flow.flow_id, status: 'invalid', problems: [...(flow.problems ?? [])] };
  return {
    ...base,
    name: d.name ?? flow.flow_id,
    status: 'valid',
    ...(d.description === undefined ? {} : { description: d.description }),
    ...(d.agent_id === undefined ? {} : { agent_id: d.agent_id }),
    ...(d.input_schema === undefined ? {} : { input_schema: d.input_schema }),
    ...(d.budget === undefined ? {} : { budget: d.budget }),
    steps: d.steps.map((s) => ({ ...s })),
  };
}

/** A stored flow run on the wire (usage and budget included). */
export function flowRunView(run: FlowRunRecord): FlowRun {
  const budget = (JSON.parse(run.definition_json) as { budget?: FlowRun['budget'] }).budget;
  return {
    run_id: run.run_id,
    flow_id: run.flow_id,
    status: run.status,
    task_id: run.task_id,
    tenant: run.tenant,
    user: run.user,
    session: run.session,
    started_at: run.started_at,
    flow_version: run.flow_version,
    usage: { ...run.usage, wall_time_ms: Math.max(0, Math.round(run.usage.wall_time_ms)) },
    ...(budget === undefined ? {} : { budget }),
    ...(run.ended_at === undefined ? {} : { ended_at: run.ended_at }),
    ...(run.error_code === undefined ? {} : { error_code: run.error_code }),
    ...(run.idempotency_key === undefined ? {} : { idempotency_key: run.idempotency_key }),
    ...(run.answer === undefined ? {} : { answer: run.answer }),
  };
}

/** One stored step on the wire. */
export function flowStepView(step: FlowStepRecord): FlowStepState {
  const optional = <K extends keyof FlowStepRecord>(key: K) => (step[key] === undefined ? {} : { [key]: step[key] });
  return {
    step_id: step.step_id,
    type: step.type,
    status: step.status,
    child_task_ids: [...step.child_task_ids],
    ...optional('answer'),
    ...optional('answers'),
    ...optional('error_code'),
    ...optional('next'),
    ...optional('started_at'),
    ...optional('ended_at'),
  };
}
