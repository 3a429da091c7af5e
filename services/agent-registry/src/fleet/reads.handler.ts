import {
  AgentGetRequest,
  AgentGovernanceRequest,
  AgentListRequest,
  AgentMemoryRequest,
  AgentMetricsRequest,
  AgentPermissionsRequest,
  AgentSkillsRequest,
  AgentToolsRequest,
  isServiceError,
  ServiceError,
} from '@ars/contracts';
import type { Agent, AgentRunCounts, FleetEntry, VerifiedIdentity } from '@ars/contracts';
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
import { agentPermissions, agentTools } from './agent-view.ts';
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
const CURSOR_METHOD = 'agents.list';
/** How long get and list wait for the run counts before answering without them, in ms. */
const COUNTS_BUDGET_MS = 1_500;

/** The wire `Agent` of a registration and its run counts. */
export function agentView(entry: FleetEntry, counts: AgentRunCounts | undefined): Agent {
  return {
    agent_id: entry.agent_id,
    registration_key: entry.registration_key,
    incarnation: entry.incarnation,
    version_hash: entry.version_hash,
    hosting: entry.hosting,
    health: entry.health,
    state: entry.state,
    registered_at: entry.registered_at,
    ...(entry.last_reported_at === undefined ? {} : { last_reported_at: entry.last_reported_at }),
    ...(entry.revision_id === null ? {} : { revision_id: entry.revision_id }),
    ...(counts === undefined ? {} : { runs_in_flight: counts.running, runs_queued: counts.pending }),
  };
}

/**
 * The run counts of get and list: the registration is the read's subject
 * and the counts are optional members, so a run-executor that does not
 * answer leaves them out (logged) instead of failing the read. Any other
 * failure is the read's.
 */
async function countsOf(deps: ReadDeps, caller: VerifiedIdentity, agentIds: readonly string[]) {
  try {
    return await deps.dependencies.runCounts(caller, caller.tenant, agentIds, COUNTS_BUDGET_MS);
  } catch (error) {
    if (!isServiceError(error) || (error.code !== 'unavailable' && error.code !== 'timeout')) throw error;
    deps.logger.warn({ err: error }, 'run counts unavailable; agents read without them');
    return [];
  }
}

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

function encodeCursor(after: string): string {
  return Buffer.from(JSON.stringify({ m: CURSOR_METHOD, a: after })).toString('base64url');
}

function decodeCursor(cursor: string): string {
  let parsed: { m?: unknown; a?: unknown } | undefined;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { m?: unknown; a?: unknown };
  } catch {
    parsed = undefined;
  }
  if (parsed?.m !== CURSOR_METHOD || typeof parsed.a !== 'string') {
    throw new ServiceError('invalid_request', 'cursor: not a next_cursor of agents.list');
  }
  return parsed.a;
}

/** agents.list: the tenant's registered agents by id, filtered (state, health, text in the id) and paged. */
function list(deps: ReadDeps): RpcHandler {
  return typedMethod(AgentListRequest, async ({ method, identity, body }) => {
    reconcileIdentity(method, identity, body.identity);
    const after = body.cursor === undefined ? undefined : decodeCursor(body.cursor);
    const { state, health, text } = body.filter ?? {};
    const all = await deps.registrar.listTenant(identity.tenant, identityOf(identity));
    const matching = all.filter(
      (e) =>
        (after === undefined || e.agent_id > after) &&
        (state === undefined || e.state === state) &&
        (health === undefined || e.health === health) &&
        (text === undefined || e.agent_id.toLowerCase().includes(text.toLowerCase())),
    );
    const page = matching.slice(0, body.limit);
    const counts = await countsOf(
      deps,
      identity,
      page.map((e) => e.agent_id),
    );
    const items = page.map((e, i) => agentView(e, counts[i]));
    const last = page[page.length - 1];
    return matching.length > body.limit && last !== undefined
      ? { items, next_cursor: encodeCursor(last.agent_id) }
      : { items };
  });
}

/** The eight reads of agents.*. */
export function createReadHandlers(deps: ReadDeps): Record<string, RpcHandler> {
  return {
    'agents.get': typedMethod(AgentGetRequest, async ({ method, identity, body }) => {
      reconcileIdentity(method, identity, body.identity);
      const entry = await registered(deps, identity, body.agent_id);
      const [counts] = await countsOf(deps, identity, [entry.agent_id]);
      return { agent: agentView(entry, counts) };
    }),
    'agents.list': list(deps),
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
