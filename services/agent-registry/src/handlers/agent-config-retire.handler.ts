import { ServiceError, AgentConfigRetireRequest } from '@ars/contracts';
import type { AgentConfigRetireResponse, VerifiedIdentity } from '@ars/contracts';
import type { EventPublisher, RpcHandler } from '@ars/bus';
import {
  COMPLETED_STAGE,
  RETIREMENT_ITEM_CLASS,
  RETIREMENT_STAGES,
  STARTED_STAGE,
  retirementOperationHash,
  stagesAfter,
} from '../domain/retirement.ts';
import type { RetirementStage } from '../domain/retirement.ts';
import type { RetirementRecord, RetirementRepository } from '../store/retirement.repository.ts';
import type { RevisionRepository } from '../store/revision.repository.ts';
import type { SessionSettingsRepository } from '../store/session-settings.repository.ts';
import type { SkillRepository } from '../store/skill.repository.ts';
import { admitAdmin } from './agent-config-revisions.handler.ts';
import { authorOf, eventIdentityOf } from './revision-writer.ts';
import { typedMethod } from '@ars/service-kit';

/** What `agent_config.retire` needs. */
export interface RetireDeps {
  readonly revisions: RevisionRepository;
  readonly variants: RevisionRepository;
  readonly sessionSettings: SessionSettingsRepository;
  readonly skills: SkillRepository;
  readonly retirements: RetirementRepository;
  readonly publisher: EventPublisher;
  readonly defaultAgentId: string;
}

/** Each release stage: how many items it holds, and releasing them (answers how many went). */
function stageWork(deps: RetireDeps, stage: RetirementStage) {
  const store = {
    user_variants: deps.variants,
    session_settings: deps.sessionSettings,
    agent_skills: deps.skills,
  }[stage];
  return {
    count: (tenant: string, agentId: string) => store.countAgent(tenant, agentId),
    release: (tenant: string, agentId: string) => store.deleteAgent(tenant, agentId),
  };
}

type RetirementEvent =
  'agent_config.retirement.started' | 'agent_config.retirement.progress' | 'agent_config.retirement.completed';

function publishStage(
  deps: RetireDeps,
  caller: VerifiedIdentity,
  record: RetirementRecord,
  type: RetirementEvent,
  stage: string,
) {
  const occurredAt = new Date().toISOString();
  const itemClass = RETIREMENT_ITEM_CLASS[stage as RetirementStage];
  return deps.publisher.publish({
    type,
    identity: eventIdentityOf(caller),
    // One id per stage of one retirement: a resumed retirement republishing a stage is dropped as a duplicate.
    eventId: `${type}:${record.operation_hash}:${stage}`,
    occurredAt,
    payload: {
      AgentID: record.agent_id,
      OperationHash: record.operation_hash,
      Stage: stage,
      ...(itemClass === undefined ? {} : { class: itemClass }),
      Completed: record.completed,
      Total: Math.max(record.total, record.completed),
      Generation: record.generation,
      OccurredAt: occurredAt,
    },
  });
}

/** Starts a retirement, or answers the record already under way or done. */
async function begin(deps: RetireDeps, caller: VerifiedIdentity, request: AgentConfigRetireRequest) {
  const { tenant } = caller;
  const agentId = request.agent_id;
  const existing = await deps.retirements.get(tenant, agentId);
  if (existing !== null && existing.state !== 'reinstated') return { record: existing };
  const head = await deps.revisions.head({ tenant, agent_id: agentId });
  if (head === null) throw new ServiceError('not_found', `agent ${agentId} has no revision`);
  const counts = await Promise.all(RETIREMENT_STAGES.map((stage) => stageWork(deps, stage).count(tenant, agentId)));
  const generation = (existing?.generation ?? 0) + 1;
  const started = await deps.retirements.begin({
    tenant,
    agent_id: agentId,
    state: 'retiring',
    generation,
    operation_hash: retirementOperationHash({
      tenant,
      agent_id: agentId,
      generation,
      head_revision_id: head.revision_id,
    }),
    stage: STARTED_STAGE,
    completed: 0,
    total: counts.reduce((sum, n) => sum + n, 0),
    head_revision_id: head.revision_id,
    author: authorOf(caller),
    ...(request.reason === undefined ? {} : { reason: request.reason }),
    started_at: new Date().toISOString(),
  });
  if (started !== null) return { record: started };
  const winner = await deps.retirements.get(tenant, agentId);
  if (winner === null) throw new ServiceError('conflict', `agent ${agentId} is being retired concurrently; retry`);
  return { record: winner };
}

/**
 * Runs the stages left after the record's stage, then completes it. Each
 * stage is recorded by compare-and-set: a concurrent runner (two retire
 * calls at once) that loses stops and answers the record as it is; releases
 * are idempotent deletes, so running one twice releases nothing more.
 */
async function runStages(deps: RetireDeps, caller: VerifiedIdentity, start: RetirementRecord) {
  let record = start;
  const current = async () => (await deps.retirements.get(record.tenant, record.agent_id)) ?? record;
  for (const stage of stagesAfter(record.stage)) {
    const released = await stageWork(deps, stage).release(record.tenant, record.agent_id);
    const advanced = await deps.retirements.advance(record, stage, record.completed + released);
    if (advanced === null) return current();
    record = advanced;
    await publishStage(deps, caller, record, 'agent_config.retirement.progress', stage);
  }
  const completed = await deps.retirements.complete(record, record.completed);
  if (completed === null) return current();
  await publishStage(deps, caller, completed, 'agent_config.retirement.completed', COMPLETED_STAGE);
  return completed;
}

/**
 * `agent_config.retire` (admin): retires an agent configuration in stages
 * (see `domain/retirement.ts`), publishing `agent_config.retirement.started`,
 * one `.progress` per stage and `.completed`. The stages run before the
 * answer, which reports the last stage reached. Retiring a retired agent
 * answers its retirement again without events; one interrupted midway
 * resumes. The runtime's default agent cannot be retired (it always
 * resolves); an agent without a revision is `not_found`.
 */
export function createRetireHandler(deps: RetireDeps): RpcHandler {
  return typedMethod(
    AgentConfigRetireRequest,
    async ({ method, identity, body: request }): Promise<AgentConfigRetireResponse> => {
      const caller = admitAdmin(method, identity, request);
      if (request.agent_id === deps.defaultAgentId) {
        throw new ServiceError(
          'invalid_request',
          `agent_id ${request.agent_id} is the default agent, which cannot be retired`,
        );
      }
      let { record } = await begin(deps, caller, request);
      if (record.state === 'retiring') {
        // Republished when resuming from `started`: the event id makes the copy a duplicate.
        if (record.stage === STARTED_STAGE) {
          await publishStage(deps, caller, record, 'agent_config.retirement.started', STARTED_STAGE);
        }
        record = await runStages(deps, caller, record);
      }
      return {
        agent_id: record.agent_id,
        operation_hash: record.operation_hash,
        stage: record.stage,
        generation: record.generation,
        started_at: record.started_at,
      };
    },
  );
}
