import {
  AgentGetRequest,
  AgentGovernanceRequest,
  AgentMemoryRequest,
  AgentMetricsRequest,
  AgentPermissionsRequest,
  AgentSkillsRequest,
  AgentToolsRequest,
  ServiceError,
} from '@ars/contracts';
import type { FleetEntry, VerifiedIdentity } from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';
import { liveAgent } from '../handlers/agent-state.ts';
import type { AgentLookup, LiveAgent } from '../handlers/agent-state.ts';
import { toSkillView } from '../handlers/skills.handler.ts';
import { effectiveSkills } from '../domain/skills.ts';
import type { SkillRepository } from '../store/skill.repository.ts';
import type { ToolCatalogueDeps } from '../tools/tools.handler.ts';
import type { FleetDependencies } from './dependencies.ts';
import { agentView, countsOf } from './agent-record.ts';
import { agentPermissions, agentTools } from './agent-view.ts';
import { createListHandler } from './list.handler.ts';
import type { FleetRegistrar } from './registration.ts';
import { identityOf } from './registration.ts';

/** What the eight fleet reads need. */
export interface ReadDeps {
  readonly registrar: FleetRegistrar;
  readonly lookup: AgentLookup;
  readonly dependencies: FleetDependencies;
  readonly skills: SkillRepository;
  readonly catalogue: ToolCatalogueDeps;
  readonly logger: Logger;
}

/** Most skill candidates one agents.skills read takes. */
const MAX_SKILLS = 500;

/** The caller's tenant's registered agent, else 404 `not_found` (unknown, another tenant's and deregistered alike). */
async function registered(deps: ReadDeps, caller: VerifiedIdentity, agentId: string): Promise<FleetEntry> {
  const stored = await deps.registrar.ensure(caller.tenant, agentId, identityOf(caller));
  if (stored === null) throw new ServiceError('not_found', `agent ${agentId} is not registered in the fleet`);
  return stored.entry;
}

/** The registered agent's head configuration (404 when it has none any more: retired). */
async function configured(deps: ReadDeps, caller: VerifiedIdentity, agentId: string): Promise<LiveAgent> {
  await registered(deps, caller, agentId);
  const live = await liveAgent(deps.lookup, caller.tenant, agentId);
  if (live === null) throw new ServiceError('not_found', `agent ${agentId} has no configuration`);
  return live;
}

/** The eight reads of agents.*. */
export function createReadHandlers(deps: ReadDeps): Record<string, RpcHandler> {
  return {
    'agents.get': typedMethod(AgentGetRequest, async ({ method, identity, body }) => {
      reconcileIdentity(method, identity, body.identity);
      const entry = await registered(deps, identity, body.agent_id);
      const [counts] = await countsOf(deps, identity, identity.tenant, [entry.agent_id]);
      return { agent: agentView(entry, counts) };
    }),
    'agents.list': createListHandler(deps),
    'agents.governance': typedMethod(AgentGovernanceRequest, async ({ method, identity, body }) => {
      reconcileIdentity(method, identity, body.identity);
      await registered(deps, identity, body.agent_id);
      const governed = await deps.dependencies.governance(identity, identity.tenant);
      return {
        agent_id: body.agent_id,
        tier: governed.tier,
        budget: { budgets: governed.budgets, spend: governed.spend },
        overrides: governed.overrides,
      };
    }),
    'agents.memory': typedMethod(AgentMemoryRequest, async ({ method, identity, body }) => {
      reconcileIdentity(method, identity, body.identity);
      await registered(deps, identity, body.agent_id);
      const usage = await deps.dependencies.memory(identity, identity.tenant);
      return { agent_id: body.agent_id, ...usage };
    }),
    'agents.metrics': typedMethod(AgentMetricsRequest, async ({ method, identity, body }) => {
      reconcileIdentity(method, identity, body.identity);
      await registered(deps, identity, body.agent_id);
      if (body.since !== undefined && body.until !== undefined && body.since >= body.until) {
        throw new ServiceError('invalid_request', 'since: must be before until');
      }
      const { counters } = await deps.dependencies.metrics(identity, {
        tenant: identity.tenant,
        agent_id: body.agent_id,
        since: body.since,
        until: body.until,
      });
      return {
        agent_id: body.agent_id,
        ...(body.since === undefined ? {} : { since: body.since }),
        ...(body.until === undefined ? {} : { until: body.until }),
        counters,
      };
    }),
    'agents.permissions': typedMethod(AgentPermissionsRequest, async ({ method, identity, body }) => {
      reconcileIdentity(method, identity, body.identity);
      const live = await configured(deps, identity, body.agent_id);
      return { agent_id: body.agent_id, permissions: agentPermissions(live.config) };
    }),
    'agents.skills': typedMethod(AgentSkillsRequest, async ({ method, identity, body }) => {
      reconcileIdentity(method, identity, body.identity);
      const live = await configured(deps, identity, body.agent_id);
      const tenant = identity.tenant;
      const records = await deps.skills.ofOwners(
        [
          { tenant, scope: 'tenant' },
          { tenant, scope: 'agent', agent_id: body.agent_id },
        ],
        MAX_SKILLS,
      );
      const winners = effectiveSkills(records, live.config.skills);
      const chosen = winners.map((w) => records.find((r) => r.name === w.name && r.scope === w.scope));
      return { agent_id: body.agent_id, items: chosen.flatMap((r) => (r === undefined ? [] : [toSkillView(r)])) };
    }),
    'agents.tools': typedMethod(AgentToolsRequest, async ({ method, identity, body }) => {
      reconcileIdentity(method, identity, body.identity);
      const live = await configured(deps, identity, body.agent_id);
      return { agent_id: body.agent_id, items: await agentTools(deps.catalogue, identity, live) };
    }),
  };
}
