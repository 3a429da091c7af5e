import { z } from 'zod';
import {
  AgentConfigContent,
  AgentConfigRevision,
  AgentConfigRevisionSummary,
  AgentId,
  ConfigChange,
  Skill,
  SkillName,
  SkillOrigin,
  SkillView,
} from '../schemas/agent-config.ts';
import { Id, Timestamp, pageOf, pageRequest, record, requestOf } from '../schemas/common.ts';

/**
 * Request and response factories shared by the admin tier and the per-user
 * variant tier of agent_config. Each call makes a fresh schema so that every
 * registry name (AgentConfigGetRequest, AgentConfigUserGetRequest, …) has its
 * own instance in the OpenAPI components.
 */

/** The members of every revision-writing request: optimistic concurrency and a note. */
export const revisionWrite = {
  parent_revision_id: Id.optional().describe('expected head revision; a stale one is 409 conflict'),
  message: z.string().max(1024).optional().describe('why, recorded on the revision'),
};

/** The response of every revision-writing request: the new head revision. */
export const revisionResponse = () => record({ revision: AgentConfigRevision });

/** set_revision: write a whole configuration as the new head revision. */
export const setRevisionRequest = () => requestOf({ agent_id: AgentId, config: AgentConfigContent, ...revisionWrite });

/** get: the head revision, or the one named. */
export const getRequest = () =>
  requestOf({ agent_id: AgentId, revision_id: Id.optional().describe('default: the head') });

/** list_revisions: newest first. */
export const listRevisionsRequest = () => requestOf({ agent_id: AgentId, ...pageRequest });
export const listRevisionsResponse = () => record({ ...pageOf(AgentConfigRevisionSummary) });

/** diff: a structural diff between two revisions (default `to`: the head). */
export const diffRequest = () =>
  requestOf({ agent_id: AgentId, from_revision_id: Id, to_revision_id: Id.optional().describe('default: the head') });
export const diffResponse = () =>
  record({
    agent_id: z.string(),
    from_revision_id: z.string(),
    to_revision_id: z.string(),
    changes: z.array(ConfigChange),
  });

/** rollback: a new head revision equal to an earlier one. */
export const rollbackRequest = () =>
  requestOf({
    agent_id: AgentId,
    to_revision_id: Id,
    parent_revision_id: revisionWrite.parent_revision_id,
    message: revisionWrite.message,
  });

/** A revision-writing setter: `agent_id`, the member(s) it replaces, concurrency and note. */
export function setterRequest<S extends z.ZodRawShape>(shape: S) {
  return requestOf({ agent_id: AgentId, ...shape, ...revisionWrite });
}

/**
 * skills.upsert: create or replace a skill; `idempotent` is true when nothing
 * changed. Replacing a skill of another origin (say a pack's) needs
 * `overwrite: true`; without it the upsert is refused (409 conflict).
 */
export const skillUpsertRequest = <S extends z.ZodRawShape>(scope: S) =>
  requestOf({
    ...scope,
    skill: Skill,
    origin: SkillOrigin.optional().describe('default manual; proposed stores a candidate, not an installed skill'),
    overwrite: z.boolean().optional().describe('replace a skill of another origin; default false'),
  });
export const skillUpsertResponse = () => record({ skill: SkillView, idempotent: z.boolean() });

/** skills.delete. */
export const skillDeleteRequest = <S extends z.ZodRawShape>(scope: S) => requestOf({ ...scope, name: SkillName });
export const skillDeleteResponse = () => record({ name: z.string(), deleted: z.boolean() });

/** skills.list. */
export const skillListRequest = <S extends z.ZodRawShape>(scope: S) => requestOf({ ...scope, ...pageRequest });
export const skillListResponse = () => record({ ...pageOf(SkillView) });

/** agent_config.retire: staged retirement; progress arrives as agent_config.retirement.* events. */
export const retireResponse = () =>
  record({
    agent_id: z.string(),
    operation_hash: z.string(),
    stage: z.string(),
    generation: z.int().nonnegative(),
    started_at: Timestamp,
  });
