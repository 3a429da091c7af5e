import { AGENT_EFFECTIVE_CONFIG, SCOPES, ServiceError } from '@ars/contracts';
import type { AgentEffectiveConfigRequest, VerifiedIdentity } from '@ars/contracts';
import type { EventPublisher } from '@ars/bus';
import { contentHash, serveInternal } from '@ars/service-kit';
import type { Logger } from '@ars/telemetry';
import type { InternalHandler } from '@ars/service-kit';
import { resolveEffectiveConfig } from '../domain/effective-config.ts';
import type { ScopedSkill, SkillOwner } from '../domain/skills.ts';
import type { RevisionRepository } from '../store/revision.repository.ts';
import type { SessionSettingsRepository } from '../store/session-settings.repository.ts';
import type { SkillRepository } from '../store/skill.repository.ts';
import { unknownAgent } from './agent-resolve.handler.ts';
import { liveAgent } from './agent-state.ts';
import type { AgentLookup } from './agent-state.ts';
import type { TenantOverridesSource } from './tenant-overrides.ts';
import type { ApprovalPolicyRepository } from '../tools/approval-policy.repository.ts';

/** What the effective configuration reads. */
export interface EffectiveConfigDeps extends AgentLookup {
  readonly variants: RevisionRepository;
  readonly sessionSettings: SessionSettingsRepository;
  readonly skills: SkillRepository;
  readonly tenantOverrides: TenantOverridesSource;
  /** The tenant's `tools.set_approval_policy` choices, carried to the run with its configuration. */
  readonly approvalPolicies?: Pick<ApprovalPolicyRepository, 'ofTenant'>;
  /** Where `skill.search_executed` goes; absent, the search is not reported. */
  readonly publisher?: EventPublisher;
  readonly logger?: Logger;
}

/** `skill.search_executed` Path of the one skill search there is: the run's effective configuration. */
export const SKILL_SEARCH_PATH = 'effective_config';

/** Skills read per resolution at most (four owners' libraries). */
const MAX_SKILL_CANDIDATES = 2_000;

/**
 * The body names the calling identity's own run, unless the caller holds
 * `admin` (acting for another): else 403 `scope_mismatch`. For every internal
 * endpoint whose body carries the run owner's triple.
 */
export function requireOwnRun(
  caller: VerifiedIdentity,
  request: { readonly tenant: string; readonly user: string; readonly session: string },
  endpoint: string = AGENT_EFFECTIVE_CONFIG.name,
): void {
  if (caller.scopes.includes(SCOPES.admin)) return;
  for (const component of ['tenant', 'user', 'session'] as const) {
    if (request[component] !== caller[component]) {
      throw new ServiceError(
        'scope_mismatch',
        `${endpoint}: the body ${component} is not the calling identity's ${component}`,
      );
    }
  }
}

function skillOwners(request: AgentEffectiveConfigRequest): SkillOwner[] {
  const { tenant, user, session, agent_id: agentId } = request;
  return [
    { tenant, scope: 'tenant' },
    { tenant, scope: 'agent', agent_id: agentId },
    { tenant, scope: 'user', user },
    { tenant, scope: 'session', user, session },
  ];
}

/**
 * `_agent.effective_config` `{tenant, user, session, agent_id}` → the
 * run's resolved configuration (see `domain/effective-config.ts` for the
 * layer order and the answer's members). Call it with the run owner's
 * verified identity; the body must name that identity (403 `scope_mismatch`
 * otherwise) unless the caller holds `admin`. An agent id `_agent.resolve` refuses is refused here the same
 * way (`invalid_request`, one message for unknown, foreign and retired). Never resolved without the
 * tenant's overrides: governance not answering them is 503 `unavailable` (retryable; see `tenant-overrides.ts`).
 */
export function createEffectiveConfigHandler(deps: EffectiveConfigDeps): InternalHandler {
  return serveInternal(AGENT_EFFECTIVE_CONFIG, async ({ identity, body: request }) => {
    requireOwnRun(identity, request);
    const { tenant, user, session, agent_id: agentId } = request;
    const agent = await liveAgent(deps, tenant, agentId);
    if (agent === null) throw unknownAgent(AGENT_EFFECTIVE_CONFIG, agentId);
    const [overrides, variant, settings, skills, approvalPolicies] = await Promise.all([
      // As the run's identity (the caller's own, or the one an admin acts for) so governance answers its tenant.
      deps.tenantOverrides.read({ tenant, user, session, scopes: identity.scopes }, tenant),
      deps.variants.head({ tenant, user, agent_id: agentId }),
      deps.sessionSettings.merged({ tenant, user, session, agent_id: agentId }),
      deps.skills.ofOwners(skillOwners(request), MAX_SKILL_CANDIDATES),
      deps.approvalPolicies?.ofTenant(tenant) ?? {},
    ]);
    const resolved = resolveEffectiveConfig({
      agentId,
      agent: { revision_id: agent.revision_id, config: agent.config },
      tenant: overrides,
      variant: variant === null ? null : { revision_id: variant.revision_id, config: variant.config },
      session: settings,
      skills: skills.map((s): ScopedSkill => ({
        name: s.name,
        scope: s.scope,
        origin: s.origin,
        content_hash: s.content_hash,
        description: s.description,
        content: s.content,
        triggers: s.triggers,
      })),
    });
    await reportSkillSearch(deps, request, resolved.skills.length);
    return { ...resolved, approval_policies: approvalPolicies };
  });
}

/**
 * Publishes `skill.search_executed` for a resolution's skill search: the
 * hash of what it searched (the four owners' libraries, not shown), its
 * path, its candidate limit and how many skills the run uses. A
 * failed publish is logged; the resolution still answers.
 */
async function reportSkillSearch(
  deps: EffectiveConfigDeps,
  request: AgentEffectiveConfigRequest,
  resultN: number,
): Promise<void> {
  if (deps.publisher === undefined) return;
  const { tenant, user, session } = request;
  const query = { owners: skillOwners(request) };
  try {
    await deps.publisher.publish({
      type: 'skill.search_executed',
      identity: { tenant, user, session },
      payload: {
        QueryHash: contentHash(query),
        Path: SKILL_SEARCH_PATH,
        Limit: MAX_SKILL_CANDIDATES,
        ResultN: resultN,
      },
    });
  } catch (error) {
    deps.logger?.warn({ err: error, tenant }, 'skill.search_executed not published');
  }
}
