import type { z } from 'zod';
import {
  AgentConfigSessionSkillsDeleteRequest,
  AgentConfigSessionSkillsListRequest,
  AgentConfigSessionSkillsUpsertRequest,
  AgentConfigSkillsDeleteRequest,
  AgentConfigSkillsListRequest,
  AgentConfigSkillsUpsertRequest,
  AgentConfigUserSkillsDeleteRequest,
  AgentConfigUserSkillsListRequest,
  AgentConfigUserSkillsUpsertRequest,
  ServiceError,
} from '@ars/contracts';
import type { IdentityScope, SkillView, VerifiedIdentity } from '@ars/contracts';
import { scrubString } from '@ars/bus';
import type { EventPublisher, RpcHandler } from '@ars/bus';
import { isInvalidCursorError } from '@ars/store';
import { refuseWriteIfErased, requireAdmin, typedMethod } from '@ars/service-kit';
import type { ErasedSessionMarkers } from '@ars/service-kit';
import { contradictedComponent } from '../domain/authority.ts';
import { MANUAL_ORIGIN, PROPOSED_ORIGIN, decideUpsert, skillContentHash } from '../domain/skills.ts';
import type { SkillOwner } from '../domain/skills.ts';
import type { SkillRecord, SkillRepository } from '../store/skill.repository.ts';
import { refuseIfRetired } from './agent-state.ts';
import type { AgentLookup } from './agent-state.ts';

/** What the skill handlers need. */
export interface SkillHandlerDeps extends AgentLookup {
  readonly skills: SkillRepository;
  readonly publisher: EventPublisher;
  /** Sessions `_agent.erase_session` erased: their session tier takes no write again. */
  readonly erased: ErasedSessionMarkers;
}

/** Upsert and delete requests of every tier share these members (admin adds `agent_id`). */
interface SkillBody {
  readonly identity?: IdentityScope;
  readonly agent_id?: string | undefined;
}

/** A tier of skills: who may call, and whose skills a call means. */
interface SkillTier {
  /** Extra gate after the identity check (the admin claim for the admin tier). */
  readonly gate?: (method: string, caller: VerifiedIdentity) => void;
  readonly owner: (caller: VerifiedIdentity, body: SkillBody) => SkillOwner;
  /** The tier's request schemas from the registry (the admin tier's add `agent_id`). */
  readonly requests: {
    readonly upsert: z.ZodType<AgentConfigSkillsUpsertRequest>;
    readonly list: z.ZodType<AgentConfigSkillsListRequest>;
    readonly delete: z.ZodType<AgentConfigSkillsDeleteRequest>;
  };
}

const ADMIN_TIER: SkillTier = {
  gate: (method, caller) => requireAdmin(method, caller),
  owner: (caller, body) =>
    body.agent_id === undefined
      ? { tenant: caller.tenant, scope: 'tenant' }
      : { tenant: caller.tenant, scope: 'agent', agent_id: body.agent_id },
  requests: {
    upsert: AgentConfigSkillsUpsertRequest,
    list: AgentConfigSkillsListRequest,
    delete: AgentConfigSkillsDeleteRequest,
  },
};
const USER_TIER: SkillTier = {
  owner: (caller) => ({ tenant: caller.tenant, scope: 'user', user: caller.user }),
  requests: {
    upsert: AgentConfigUserSkillsUpsertRequest,
    list: AgentConfigUserSkillsListRequest,
    delete: AgentConfigUserSkillsDeleteRequest,
  },
};
const SESSION_TIER: SkillTier = {
  owner: (caller) => ({ tenant: caller.tenant, scope: 'session', user: caller.user, session: caller.session }),
  requests: {
    upsert: AgentConfigSessionSkillsUpsertRequest,
    list: AgentConfigSessionSkillsListRequest,
    delete: AgentConfigSessionSkillsDeleteRequest,
  },
};

/** A stored skill as the wire shows it. */
export function toSkillView(record: SkillRecord): SkillView {
  return {
    name: record.name,
    ...(record.description === undefined ? {} : { description: record.description }),
    content: record.content,
    triggers: record.triggers,
    origin: record.origin,
    scope: record.scope,
    content_hash: record.content_hash,
    updated_at: record.updated_at,
  };
}

function skillEvent(deps: SkillHandlerDeps, caller: VerifiedIdentity, body: SkillBody, type: string, payload: object) {
  return deps.publisher.publish({
    type,
    identity: { tenant: caller.tenant, user: caller.user, session: caller.session, run: body.identity?.run },
    payload,
  });
}

/**
 * Skill calls are identity-mandatory: the body identity may only repeat the
 * verified one. A contradiction publishes `skill.identity_rejected`
 * (Operation: the method) and is refused 401 `identity_required`.
 */
async function admit(
  deps: SkillHandlerDeps,
  tier: SkillTier,
  method: string,
  caller: VerifiedIdentity,
  body: SkillBody,
) {
  const contradicted = contradictedComponent(caller, body.identity);
  if (contradicted !== undefined) {
    const reason = `the body identity ${contradicted} contradicts the verified identity`;
    await skillEvent(deps, caller, body, 'skill.identity_rejected', { Operation: method, Reason: reason });
    throw new ServiceError('identity_required', `${method}: ${reason}`);
  }
  tier.gate?.(method, caller);
  return tier.owner(caller, body);
}

/**
 * The session tier's writes under a session the erasure cascade reached are
 * refused 410 `session_erased`, checked after the write (see
 * `ErasedSessionMarkers`): the write is taken back with the rest of the
 * session's skills. Other tiers write nothing under a session.
 */
async function refuseIfSessionErased(deps: SkillHandlerDeps, owner: SkillOwner, method: string): Promise<void> {
  if (owner.scope !== 'session' || owner.user === undefined || owner.session === undefined) return;
  const triple = { tenant: owner.tenant, user: owner.user, session: owner.session };
  await refuseWriteIfErased(deps.erased, triple, method, () => deps.skills.deleteSession(triple));
}

/** A short excerpt for `skill.proposed`: scrubbed of secret-shaped text first, then cut. */
const excerpt = (text: string) => scrubString(text).slice(0, 120);

interface Proposal {
  readonly result: 'proposed' | 'unchanged' | 'promoted' | 'rejected';
  readonly origin: string;
  readonly reason?: string;
}

function publishProposed(
  deps: SkillHandlerDeps,
  caller: VerifiedIdentity,
  request: AgentConfigSkillsUpsertRequest,
  owner: SkillOwner,
  proposal: Proposal,
) {
  const { skill } = request;
  return skillEvent(deps, caller, request, 'skill.proposed', {
    Name: skill.name,
    Origin: proposal.origin,
    Scope: owner.scope,
    OriginRef: request.identity?.run ?? '',
    ContentHash: skillContentHash(skill),
    Result: proposal.result,
    Reason: proposal.reason ?? '',
    RedactedTitleExcerpt: excerpt(skill.description ?? skill.name),
    RedactedTriggerExcerpt: excerpt((skill.triggers ?? []).join(', ')),
    Promotion: proposal.result === 'promoted',
  });
}

/** Lost races an upsert retries before answering `conflict`. */
const MAX_UPSERT_ATTEMPTS = 8;

/** Writes per {@link decideUpsert}; answers the stored record and what happened. */
async function store(
  deps: SkillHandlerDeps,
  caller: VerifiedIdentity,
  request: AgentConfigSkillsUpsertRequest,
  owner: SkillOwner,
) {
  const { skill } = request;
  const incoming = { origin: request.origin ?? MANUAL_ORIGIN, content_hash: skillContentHash(skill) };
  for (let attempt = 0; attempt < MAX_UPSERT_ATTEMPTS; attempt += 1) {
    const existing = await deps.skills.get(owner, skill.name);
    const decision = decideUpsert(existing, incoming, request.overwrite ?? false);
    if (decision.kind === 'idempotent' && existing !== null)
      return { record: existing, idempotent: true, promotion: false };
    if (decision.kind === 'refuse_overwrite' && existing !== null) {
      await skillEvent(deps, caller, request, 'skill.pack_overwrite_refused', {
        Name: skill.name,
        ExistingOrigin: existing.origin,
        IncomingOrigin: incoming.origin,
      });
      throw new ServiceError(
        'conflict',
        `skill ${skill.name} has origin ${existing.origin}; pass overwrite: true to replace it`,
      );
    }
    if (decision.kind === 'refuse_proposal') {
      const reason = `an installed skill named ${skill.name} exists`;
      await publishProposed(deps, caller, request, owner, { result: 'rejected', origin: PROPOSED_ORIGIN, reason });
      throw new ServiceError('conflict', `${reason}; a proposal never replaces it`);
    }
    const stored = await deps.skills.put(
      owner,
      { ...skill, triggers: skill.triggers ?? [], origin: incoming.origin, content_hash: incoming.content_hash },
      existing,
    );
    if (stored !== null)
      return { record: stored, idempotent: false, promotion: decision.kind === 'replace' && decision.promotion };
  }
  throw new ServiceError('conflict', `skill ${skill.name} is being written concurrently; retry`);
}

/**
 * skills.upsert: creates or replaces a skill (see `decideUpsert`). An
 * installed skill publishes `skill.upserted` (Idempotent when that content
 * and origin were there already, nothing written); origin `proposed` stores a
 * candidate and publishes `skill.proposed` instead; installing over a
 * proposal promotes it (`skill.upserted`, then `skill.proposed` with
 * Promotion). Replacing another origin without `overwrite` publishes
 * `skill.pack_overwrite_refused` and is 409 `conflict`.
 */
function upsert(deps: SkillHandlerDeps, tier: SkillTier): RpcHandler {
  return typedMethod(tier.requests.upsert, async ({ method, identity, body: request }) => {
    const owner = await admit(deps, tier, method, identity, request);
    if (owner.agent_id !== undefined) await refuseIfRetired(deps, owner.tenant, owner.agent_id, method);
    const { record, idempotent, promotion } = await store(deps, identity, request, owner);
    await refuseIfSessionErased(deps, owner, method);
    if (record.origin === PROPOSED_ORIGIN) {
      await publishProposed(deps, identity, request, owner, {
        result: idempotent ? 'unchanged' : 'proposed',
        origin: PROPOSED_ORIGIN,
      });
    } else {
      await skillEvent(deps, identity, request, 'skill.upserted', {
        Name: record.name,
        Origin: record.origin,
        Scope: record.scope,
        ContentHash: record.content_hash,
        Idempotent: idempotent,
      });
      if (promotion)
        await publishProposed(deps, identity, request, owner, { result: 'promoted', origin: record.origin });
    }
    return { skill: toSkillView(record), idempotent };
  });
}

/** skills.list: the owner's skills by name, proposals included. */
function list(deps: SkillHandlerDeps, tier: SkillTier): RpcHandler {
  return typedMethod(tier.requests.list, async ({ method, identity, body: request }) => {
    const owner = await admit(deps, tier, method, identity, request);
    try {
      const page = await deps.skills.list(owner, { limit: request.limit, after: request.cursor });
      return {
        items: page.items.map(toSkillView),
        ...(page.next_cursor === null ? {} : { next_cursor: page.next_cursor }),
      };
    } catch (error) {
      if (isInvalidCursorError(error)) throw new ServiceError('invalid_request', 'cursor: not a cursor of this list');
      throw error;
    }
  });
}

/** skills.delete: `deleted` false when there was nothing; `skill.deleted` only when something went. */
function remove(deps: SkillHandlerDeps, tier: SkillTier): RpcHandler {
  return typedMethod(tier.requests.delete, async ({ method, identity, body: request }) => {
    const owner = await admit(deps, tier, method, identity, request);
    const deleted = await deps.skills.delete(owner, request.name);
    await refuseIfSessionErased(deps, owner, method);
    if (deleted) await skillEvent(deps, identity, request, 'skill.deleted', { Name: request.name });
    return { name: request.name, deleted };
  });
}

/**
 * The nine skill methods: admin `agent_config.skills.*` (the tenant library,
 * or one agent's with `agent_id`), `agent_config.user.skills.*` (the verified
 * user's) and `agent_config.session.skills.*` (the verified session's).
 */
export function createSkillHandlers(deps: SkillHandlerDeps): Record<string, RpcHandler> {
  const tiers = [
    ['agent_config.skills', ADMIN_TIER],
    ['agent_config.user.skills', USER_TIER],
    ['agent_config.session.skills', SESSION_TIER],
  ] as const;
  const handlers: Record<string, RpcHandler> = {};
  for (const [prefix, tier] of tiers) {
    handlers[`${prefix}.upsert`] = upsert(deps, tier);
    handlers[`${prefix}.list`] = list(deps, tier);
    handlers[`${prefix}.delete`] = remove(deps, tier);
  }
  return handlers;
}
