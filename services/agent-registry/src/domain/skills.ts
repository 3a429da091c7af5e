import type { Skill } from '@ars/contracts';
import { contentHash } from '@ars/service-kit';

/**
 * Skills live at four scopes: the tenant's library, one agent of the tenant,
 * one user of the tenant, one session of a user. Where two scopes hold a
 * skill of the same name, the narrower wins: session, user, agent, tenant.
 */
export const SKILL_SCOPES = ['session', 'user', 'agent', 'tenant'] as const;
export type SkillScope = (typeof SKILL_SCOPES)[number];

/** The owner of a skill: its tenant and scope, and the one member the scope is about. */
export interface SkillOwner {
  readonly tenant: string;
  readonly scope: SkillScope;
  readonly agent_id?: string | undefined;
  readonly user?: string | undefined;
  readonly session?: string | undefined;
}

/** A stable key of an owner (and of no other): the JSON of its members in a fixed order. */
export function ownerKey(owner: SkillOwner): string {
  return JSON.stringify([owner.tenant, owner.scope, owner.agent_id ?? '', owner.user ?? '', owner.session ?? '']);
}

/** The origin of a skill written by a person. */
export const MANUAL_ORIGIN = 'manual';
/** The origin of a candidate skill: stored, listed, never part of an effective configuration. */
export const PROPOSED_ORIGIN = 'proposed';

/** `sha256:<hex>` of the canonical JSON of the skill as written (name, description, content, triggers). */
export function skillContentHash(skill: Skill): string {
  return contentHash({
    name: skill.name,
    description: skill.description,
    content: skill.content,
    triggers: skill.triggers ?? [],
  });
}

/** What is stored under a name before an upsert. */
export interface StoredSkillFacts {
  readonly origin: string;
  readonly content_hash: string;
}

/**
 * What an upsert does:
 * - `insert`: nothing under the name yet;
 * - `idempotent`: same origin and same content; nothing is written;
 * - `replace`: same origin, or another origin with `overwrite`, or a
 *   proposal promoted (`promotion`) by an upsert of another origin;
 * - `refuse_overwrite`: another installed origin without `overwrite`;
 * - `refuse_proposal`: a proposal never replaces an installed skill.
 */
export type UpsertDecision =
  | { readonly kind: 'insert' }
  | { readonly kind: 'idempotent' }
  | { readonly kind: 'replace'; readonly promotion: boolean }
  | { readonly kind: 'refuse_overwrite' }
  | { readonly kind: 'refuse_proposal' };

/** Decides an upsert of `incoming` over `existing` (see {@link UpsertDecision}). */
export function decideUpsert(
  existing: StoredSkillFacts | null,
  incoming: StoredSkillFacts,
  overwrite: boolean,
): UpsertDecision {
  if (existing === null) return { kind: 'insert' };
  if (existing.origin === incoming.origin) {
    return existing.content_hash === incoming.content_hash
      ? { kind: 'idempotent' }
      : { kind: 'replace', promotion: false };
  }
  if (existing.origin === PROPOSED_ORIGIN) return { kind: 'replace', promotion: true };
  if (incoming.origin === PROPOSED_ORIGIN) return { kind: 'refuse_proposal' };
  return overwrite ? { kind: 'replace', promotion: false } : { kind: 'refuse_overwrite' };
}

/** A stored skill as the effective configuration needs it. */
export interface ScopedSkill {
  readonly name: string;
  readonly scope: SkillScope;
  readonly origin: string;
  readonly content_hash: string;
  readonly description?: string | undefined;
  readonly content: string;
  readonly triggers: readonly string[];
}

/**
 * The skills a run uses, by name: installed skills only (no proposals), the
 * narrowest scope winning a name. Tenant-library skills count only when the
 * agent's `skills` membership names them (absent membership: all of them);
 * agent, user and session skills always count. Sorted by name.
 */
export function effectiveSkills(
  skills: readonly ScopedSkill[],
  membership: readonly string[] | undefined,
): ScopedSkill[] {
  const rank = (scope: SkillScope) => SKILL_SCOPES.indexOf(scope);
  const winners = new Map<string, ScopedSkill>();
  for (const skill of skills) {
    if (skill.origin === PROPOSED_ORIGIN) continue;
    if (skill.scope === 'tenant' && membership !== undefined && !membership.includes(skill.name)) continue;
    const held = winners.get(skill.name);
    if (held === undefined || rank(skill.scope) < rank(held.scope)) winners.set(skill.name, skill);
  }
  return [...winners.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
