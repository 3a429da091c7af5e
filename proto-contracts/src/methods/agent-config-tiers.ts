import { z } from 'zod';
import { SCOPES } from '../identity.ts';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import { AgentId } from '../schemas/agent-config.ts';
import { Timestamp, record, requestOf } from '../schemas/common.ts';
import {
  diffRequest,
  diffResponse,
  getRequest,
  listRevisionsRequest,
  listRevisionsResponse,
  revisionResponse,
  rollbackRequest,
  setRevisionRequest,
  skillDeleteRequest,
  skillDeleteResponse,
  skillListRequest,
  skillListResponse,
  skillUpsertRequest,
  skillUpsertResponse,
} from './agent-config-shapes.ts';
import { onFamily } from './routing.ts';

/** Session settings apply to every agent, or to one when `agent_id` is given. */
const sessionAgent = { agent_id: AgentId.optional().describe('absent: every agent run in this session') };

/** agent_config.session.set_source_disables: tool sources disabled for the verified session. */
export const AgentConfigSessionSetSourceDisablesRequest = requestOf({
  ...sessionAgent,
  sources: z
    .array(z.string().min(1).max(256))
    .max(100)
    .describe('tool sources (builtin or MCP server ids); [] re-enables all'),
});
/** Response of `agent_config.session.set_source_disables`. */
export const AgentConfigSessionSetSourceDisablesResponse = record({
  session_id: z.string(),
  agent_id: z.string().optional(),
  sources: z.array(z.string()),
  updated_at: Timestamp,
});

/** agent_config.session.set_user_prompt: the session's user prompt layer; '' clears it. */
export const AgentConfigSessionSetUserPromptRequest = requestOf({
  ...sessionAgent,
  prompt: z.string().max(16_384),
});
/** Response of `agent_config.session.set_user_prompt`. */
export const AgentConfigSessionSetUserPromptResponse = record({
  session_id: z.string(),
  agent_id: z.string().optional(),
  prompt: z.string(),
  updated_at: Timestamp,
});

/** Request body of `agent_config.session.skills.delete`. */
export const AgentConfigSessionSkillsDeleteRequest = skillDeleteRequest({});
/** Response of `agent_config.session.skills.delete`. */
export const AgentConfigSessionSkillsDeleteResponse = skillDeleteResponse();
/** Request body of `agent_config.session.skills.list`. */
export const AgentConfigSessionSkillsListRequest = skillListRequest({});
/** Response of `agent_config.session.skills.list`. */
export const AgentConfigSessionSkillsListResponse = skillListResponse();
/** Request body of `agent_config.session.skills.upsert`. */
export const AgentConfigSessionSkillsUpsertRequest = skillUpsertRequest({});
/** Response of `agent_config.session.skills.upsert`. */
export const AgentConfigSessionSkillsUpsertResponse = skillUpsertResponse();
/** Request body of `agent_config.user.skills.delete`. */
export const AgentConfigUserSkillsDeleteRequest = skillDeleteRequest({});
/** Response of `agent_config.user.skills.delete`. */
export const AgentConfigUserSkillsDeleteResponse = skillDeleteResponse();
/** Request body of `agent_config.user.skills.list`. */
export const AgentConfigUserSkillsListRequest = skillListRequest({});
/** Response of `agent_config.user.skills.list`. */
export const AgentConfigUserSkillsListResponse = skillListResponse();
/** Request body of `agent_config.user.skills.upsert`. */
export const AgentConfigUserSkillsUpsertRequest = skillUpsertRequest({});
/** Response of `agent_config.user.skills.upsert`. */
export const AgentConfigUserSkillsUpsertResponse = skillUpsertResponse();

/** Request body of `agent_config.user.diff`. */
export const AgentConfigUserDiffRequest = diffRequest();
/** Response of `agent_config.user.diff`. */
export const AgentConfigUserDiffResponse = diffResponse();
/** Request body of `agent_config.user.get`. */
export const AgentConfigUserGetRequest = getRequest();
/** Response of `agent_config.user.get`. */
export const AgentConfigUserGetResponse = revisionResponse();
/** Request body of `agent_config.user.list_revisions`. */
export const AgentConfigUserListRevisionsRequest = listRevisionsRequest();
/** Response of `agent_config.user.list_revisions`. */
export const AgentConfigUserListRevisionsResponse = listRevisionsResponse();
/** Request body of `agent_config.user.rollback`. */
export const AgentConfigUserRollbackRequest = rollbackRequest();
/** Response of `agent_config.user.rollback`. */
export const AgentConfigUserRollbackResponse = revisionResponse();
/** Request body of `agent_config.user.set_revision`. */
export const AgentConfigUserSetRevisionRequest = setRevisionRequest();
/** Response of `agent_config.user.set_revision`. */
export const AgentConfigUserSetRevisionResponse = revisionResponse();

type TierRow = readonly [
  name: string,
  stem: string,
  read: boolean,
  request: z.ZodType,
  response: z.ZodType,
  summary: string,
];

const SESSION_USER_ROWS: readonly TierRow[] = [
  [
    'agent_config.session.set_source_disables',
    'AgentConfigSessionSetSourceDisables',
    false,
    AgentConfigSessionSetSourceDisablesRequest,
    AgentConfigSessionSetSourceDisablesResponse,
    'Disable tool sources for the session.',
  ],
  [
    'agent_config.session.set_user_prompt',
    'AgentConfigSessionSetUserPrompt',
    false,
    AgentConfigSessionSetUserPromptRequest,
    AgentConfigSessionSetUserPromptResponse,
    "Set the session's user prompt layer.",
  ],
  [
    'agent_config.session.skills.delete',
    'AgentConfigSessionSkillsDelete',
    false,
    AgentConfigSessionSkillsDeleteRequest,
    AgentConfigSessionSkillsDeleteResponse,
    'Delete a session skill.',
  ],
  [
    'agent_config.session.skills.list',
    'AgentConfigSessionSkillsList',
    true,
    AgentConfigSessionSkillsListRequest,
    AgentConfigSessionSkillsListResponse,
    'List session skills.',
  ],
  [
    'agent_config.session.skills.upsert',
    'AgentConfigSessionSkillsUpsert',
    false,
    AgentConfigSessionSkillsUpsertRequest,
    AgentConfigSessionSkillsUpsertResponse,
    'Create or replace a session skill.',
  ],
  [
    'agent_config.user.skills.delete',
    'AgentConfigUserSkillsDelete',
    false,
    AgentConfigUserSkillsDeleteRequest,
    AgentConfigUserSkillsDeleteResponse,
    "Delete one of the caller's skills.",
  ],
  [
    'agent_config.user.skills.list',
    'AgentConfigUserSkillsList',
    true,
    AgentConfigUserSkillsListRequest,
    AgentConfigUserSkillsListResponse,
    "List the caller's skills.",
  ],
  [
    'agent_config.user.skills.upsert',
    'AgentConfigUserSkillsUpsert',
    false,
    AgentConfigUserSkillsUpsertRequest,
    AgentConfigUserSkillsUpsertResponse,
    "Create or replace one of the caller's skills.",
  ],
];

const PER_USER_ROWS: readonly TierRow[] = [
  [
    'agent_config.user.diff',
    'AgentConfigUserDiff',
    true,
    AgentConfigUserDiffRequest,
    AgentConfigUserDiffResponse,
    "Structural diff between two of the caller's variant revisions.",
  ],
  [
    'agent_config.user.get',
    'AgentConfigUserGet',
    true,
    AgentConfigUserGetRequest,
    AgentConfigUserGetResponse,
    "Read the caller's variant of an agent configuration.",
  ],
  [
    'agent_config.user.list_revisions',
    'AgentConfigUserListRevisions',
    true,
    AgentConfigUserListRevisionsRequest,
    AgentConfigUserListRevisionsResponse,
    "List the caller's variant revisions.",
  ],
  [
    'agent_config.user.rollback',
    'AgentConfigUserRollback',
    false,
    AgentConfigUserRollbackRequest,
    AgentConfigUserRollbackResponse,
    "Roll the caller's variant back to an earlier revision.",
  ],
  [
    'agent_config.user.set_revision',
    'AgentConfigUserSetRevision',
    false,
    AgentConfigUserSetRevisionRequest,
    AgentConfigUserSetRevisionResponse,
    "Write the caller's variant as a new revision.",
  ],
];

function tierMethod([name, stem, read, request, response, summary]: TierRow, perUser: boolean): MethodDef {
  return defineMethod({
    name,
    family: 'agent_config',
    ...onFamily(name),
    service: 'agent-registry',
    auth: read ? ['R'] : ['M'],
    ...(perUser ? { requiredScope: SCOPES.agentConfigUser } : {}),
    requestName: `${stem}Request`,
    responseName: `${stem}Response`,
    request,
    response,
    summary,
  });
}

/**
 * The session-user tier (identity-mandatory, no admin) and the per-user
 * variant tier (requires the verified `agent_config:user` claim, not admin).
 */
export const AGENT_CONFIG_TIER_METHODS: readonly MethodDef[] = [
  ...SESSION_USER_ROWS.map((row) => tierMethod(row, false)),
  ...PER_USER_ROWS.map((row) => tierMethod(row, true)),
];

export type AgentConfigSessionSetSourceDisablesRequest = z.infer<typeof AgentConfigSessionSetSourceDisablesRequest>;
export type AgentConfigSessionSetSourceDisablesResponse = z.infer<typeof AgentConfigSessionSetSourceDisablesResponse>;
export type AgentConfigSessionSetUserPromptRequest = z.infer<typeof AgentConfigSessionSetUserPromptRequest>;
export type AgentConfigSessionSetUserPromptResponse = z.infer<typeof AgentConfigSessionSetUserPromptResponse>;
export type AgentConfigSessionSkillsDeleteRequest = z.infer<typeof AgentConfigSessionSkillsDeleteRequest>;
export type AgentConfigSessionSkillsDeleteResponse = z.infer<typeof AgentConfigSessionSkillsDeleteResponse>;
export type AgentConfigSessionSkillsListRequest = z.infer<typeof AgentConfigSessionSkillsListRequest>;
export type AgentConfigSessionSkillsListResponse = z.infer<typeof AgentConfigSessionSkillsListResponse>;
export type AgentConfigSessionSkillsUpsertRequest = z.infer<typeof AgentConfigSessionSkillsUpsertRequest>;
export type AgentConfigSessionSkillsUpsertResponse = z.infer<typeof AgentConfigSessionSkillsUpsertResponse>;
export type AgentConfigUserSkillsDeleteRequest = z.infer<typeof AgentConfigUserSkillsDeleteRequest>;
export type AgentConfigUserSkillsDeleteResponse = z.infer<typeof AgentConfigUserSkillsDeleteResponse>;
export type AgentConfigUserSkillsListRequest = z.infer<typeof AgentConfigUserSkillsListRequest>;
export type AgentConfigUserSkillsListResponse = z.infer<typeof AgentConfigUserSkillsListResponse>;
export type AgentConfigUserSkillsUpsertRequest = z.infer<typeof AgentConfigUserSkillsUpsertRequest>;
export type AgentConfigUserSkillsUpsertResponse = z.infer<typeof AgentConfigUserSkillsUpsertResponse>;
export type AgentConfigUserDiffRequest = z.infer<typeof AgentConfigUserDiffRequest>;
export type AgentConfigUserDiffResponse = z.infer<typeof AgentConfigUserDiffResponse>;
export type AgentConfigUserGetRequest = z.infer<typeof AgentConfigUserGetRequest>;
export type AgentConfigUserGetResponse = z.infer<typeof AgentConfigUserGetResponse>;
export type AgentConfigUserListRevisionsRequest = z.infer<typeof AgentConfigUserListRevisionsRequest>;
export type AgentConfigUserListRevisionsResponse = z.infer<typeof AgentConfigUserListRevisionsResponse>;
export type AgentConfigUserRollbackRequest = z.infer<typeof AgentConfigUserRollbackRequest>;
export type AgentConfigUserRollbackResponse = z.infer<typeof AgentConfigUserRollbackResponse>;
export type AgentConfigUserSetRevisionRequest = z.infer<typeof AgentConfigUserSetRevisionRequest>;
export type AgentConfigUserSetRevisionResponse = z.infer<typeof AgentConfigUserSetRevisionResponse>;
