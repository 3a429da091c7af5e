import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import {
  AgentId,
  LlmParams,
  LlmProviderConfig,
  McpConnection,
  OAuthMcpCapability,
  OAuthProviderConfig,
  PromptLayer,
  SystemBlock,
  ToolExposure,
} from '../schemas/agent-config.ts';
import { Id, requestOf } from '../schemas/common.ts';
import {
  diffRequest,
  diffResponse,
  getRequest,
  listRevisionsRequest,
  listRevisionsResponse,
  retireResponse,
  revisionResponse,
  rollbackRequest,
  setRevisionRequest,
  setterRequest,
  skillDeleteRequest,
  skillDeleteResponse,
  skillListRequest,
  skillListResponse,
  skillUpsertRequest,
  skillUpsertResponse,
} from './agent-config-shapes.ts';
import { onFamily } from './routing.ts';

/** Admin skills are tenant-wide, or one agent's when `agent_id` is given. */
const adminSkillScope = { agent_id: AgentId.optional().describe("absent: the tenant's skill library") };

/** Request body of `agent_config.add_mcp_connection`. */
export const AgentConfigAddMCPConnectionRequest = setterRequest({ connection: McpConnection });
/** Request body of `agent_config.diff`. */
export const AgentConfigDiffRequest = diffRequest();
/** Response of `agent_config.diff`. */
export const AgentConfigDiffResponse = diffResponse();
/** Request body of `agent_config.get`. */
export const AgentConfigGetRequest = getRequest();
/** Response of `agent_config.get`. */
export const AgentConfigGetResponse = revisionResponse();
/** Request body of `agent_config.list_revisions`. */
export const AgentConfigListRevisionsRequest = listRevisionsRequest();
/** Response of `agent_config.list_revisions`. */
export const AgentConfigListRevisionsResponse = listRevisionsResponse();
/** Request body of `agent_config.register_oauth_mcp_capability`. */
export const AgentConfigRegisterOAuthMCPCapabilityRequest = setterRequest({ capability: OAuthMcpCapability });
/** Request body of `agent_config.remove_mcp_connection`. */
export const AgentConfigRemoveMCPConnectionRequest = setterRequest({ server_id: Id });
/** Request body of `agent_config.remove_oauth_mcp_capability`. */
export const AgentConfigRemoveOAuthMCPCapabilityRequest = setterRequest({
  server_id: Id,
  provider_name: z.string().min(1).max(128),
});
/** Request body of `agent_config.remove_oauth_provider`. */
export const AgentConfigRemoveOAuthProviderRequest = setterRequest({ provider_name: z.string().min(1).max(128) });
/** Request body of `agent_config.retire`. */
export const AgentConfigRetireRequest = requestOf({ agent_id: AgentId, reason: z.string().max(1024).optional() });
/** Response of `agent_config.retire`. */
export const AgentConfigRetireResponse = retireResponse();
/** Request body of `agent_config.rollback`. */
export const AgentConfigRollbackRequest = rollbackRequest();
/** Request body of `agent_config.set_extra_system_blocks`. */
export const AgentConfigSetExtraSystemBlocksRequest = setterRequest({ blocks: z.array(SystemBlock).max(100) });
/** Request body of `agent_config.set_llm_params`. */
export const AgentConfigSetLLMParamsRequest = setterRequest({ params: LlmParams });
/** Request body of `agent_config.set_llm_provider`. */
export const AgentConfigSetLLMProviderRequest = setterRequest({ provider: LlmProviderConfig });
/** Request body of `agent_config.set_mcp_discovery_origins`. */
export const AgentConfigSetMCPDiscoveryOriginsRequest = setterRequest({
  origins: z.array(z.string().min(1).max(2048)).max(100).describe('origins MCP discovery may reach'),
});
/** Request body of `agent_config.set_oauth_provider`. */
export const AgentConfigSetOAuthProviderRequest = setterRequest({ provider: OAuthProviderConfig });
/** Request body of `agent_config.set_prompt_layers`. */
export const AgentConfigSetPromptLayersRequest = setterRequest({ layers: z.array(PromptLayer).max(100) });
/** Request body of `agent_config.set_revision`. */
export const AgentConfigSetRevisionRequest = setRevisionRequest();
/** Request body of `agent_config.set_tool_exposure`. */
export const AgentConfigSetToolExposureRequest = setterRequest({ exposure: ToolExposure });
/** Request body of `agent_config.skills.delete`. */
export const AgentConfigSkillsDeleteRequest = skillDeleteRequest(adminSkillScope);
/** Response of `agent_config.skills.delete`. */
export const AgentConfigSkillsDeleteResponse = skillDeleteResponse();
/** Request body of `agent_config.skills.list`. */
export const AgentConfigSkillsListRequest = skillListRequest(adminSkillScope);
/** Response of `agent_config.skills.list`. */
export const AgentConfigSkillsListResponse = skillListResponse();
/** Request body of `agent_config.skills.upsert`. */
export const AgentConfigSkillsUpsertRequest = skillUpsertRequest(adminSkillScope);
/** Response of `agent_config.skills.upsert`. */
export const AgentConfigSkillsUpsertResponse = skillUpsertResponse();

/** Every revision-writing method answers with the new head revision. */
export const AgentConfigAddMCPConnectionResponse = revisionResponse();
/** Response of `agent_config.register_oauth_mcp_capability`. */
export const AgentConfigRegisterOAuthMCPCapabilityResponse = revisionResponse();
/** Response of `agent_config.remove_mcp_connection`. */
export const AgentConfigRemoveMCPConnectionResponse = revisionResponse();
/** Response of `agent_config.remove_oauth_mcp_capability`. */
export const AgentConfigRemoveOAuthMCPCapabilityResponse = revisionResponse();
/** Response of `agent_config.remove_oauth_provider`. */
export const AgentConfigRemoveOAuthProviderResponse = revisionResponse();
/** Response of `agent_config.rollback`. */
export const AgentConfigRollbackResponse = revisionResponse();
/** Response of `agent_config.set_extra_system_blocks`. */
export const AgentConfigSetExtraSystemBlocksResponse = revisionResponse();
/** Response of `agent_config.set_llm_params`. */
export const AgentConfigSetLLMParamsResponse = revisionResponse();
/** Response of `agent_config.set_llm_provider`. */
export const AgentConfigSetLLMProviderResponse = revisionResponse();
/** Response of `agent_config.set_mcp_discovery_origins`. */
export const AgentConfigSetMCPDiscoveryOriginsResponse = revisionResponse();
/** Response of `agent_config.set_oauth_provider`. */
export const AgentConfigSetOAuthProviderResponse = revisionResponse();
/** Response of `agent_config.set_prompt_layers`. */
export const AgentConfigSetPromptLayersResponse = revisionResponse();
/** Response of `agent_config.set_revision`. */
export const AgentConfigSetRevisionResponse = revisionResponse();
/** Response of `agent_config.set_tool_exposure`. */
export const AgentConfigSetToolExposureResponse = revisionResponse();

type AdminRow = readonly [
  name: string,
  stem: string,
  read: boolean,
  request: z.ZodType,
  response: z.ZodType,
  summary: string,
];

const ADMIN_ROWS: readonly AdminRow[] = [
  [
    'agent_config.add_mcp_connection',
    'AgentConfigAddMCPConnection',
    false,
    AgentConfigAddMCPConnectionRequest,
    AgentConfigAddMCPConnectionResponse,
    'Add an MCP connection to an agent.',
  ],
  [
    'agent_config.diff',
    'AgentConfigDiff',
    true,
    AgentConfigDiffRequest,
    AgentConfigDiffResponse,
    'Structural diff between two revisions.',
  ],
  [
    'agent_config.get',
    'AgentConfigGet',
    true,
    AgentConfigGetRequest,
    AgentConfigGetResponse,
    "Read an agent's head (or a named) revision.",
  ],
  [
    'agent_config.list_revisions',
    'AgentConfigListRevisions',
    true,
    AgentConfigListRevisionsRequest,
    AgentConfigListRevisionsResponse,
    "List an agent's revisions, newest first.",
  ],
  [
    'agent_config.register_oauth_mcp_capability',
    'AgentConfigRegisterOAuthMCPCapability',
    false,
    AgentConfigRegisterOAuthMCPCapabilityRequest,
    AgentConfigRegisterOAuthMCPCapabilityResponse,
    'Bind an MCP server to an OAuth provider with scopes.',
  ],
  [
    'agent_config.remove_mcp_connection',
    'AgentConfigRemoveMCPConnection',
    false,
    AgentConfigRemoveMCPConnectionRequest,
    AgentConfigRemoveMCPConnectionResponse,
    'Remove an MCP connection from an agent.',
  ],
  [
    'agent_config.remove_oauth_mcp_capability',
    'AgentConfigRemoveOAuthMCPCapability',
    false,
    AgentConfigRemoveOAuthMCPCapabilityRequest,
    AgentConfigRemoveOAuthMCPCapabilityResponse,
    'Remove an OAuth MCP capability.',
  ],
  [
    'agent_config.remove_oauth_provider',
    'AgentConfigRemoveOAuthProvider',
    false,
    AgentConfigRemoveOAuthProviderRequest,
    AgentConfigRemoveOAuthProviderResponse,
    'Remove an OAuth provider from an agent.',
  ],
  [
    'agent_config.retire',
    'AgentConfigRetire',
    false,
    AgentConfigRetireRequest,
    AgentConfigRetireResponse,
    'Retire an agent configuration (staged).',
  ],
  [
    'agent_config.rollback',
    'AgentConfigRollback',
    false,
    AgentConfigRollbackRequest,
    AgentConfigRollbackResponse,
    'Write a new head revision equal to an earlier one.',
  ],
  [
    'agent_config.set_extra_system_blocks',
    'AgentConfigSetExtraSystemBlocks',
    false,
    AgentConfigSetExtraSystemBlocksRequest,
    AgentConfigSetExtraSystemBlocksResponse,
    'Replace the extra system blocks.',
  ],
  [
    'agent_config.set_llm_params',
    'AgentConfigSetLLMParams',
    false,
    AgentConfigSetLLMParamsRequest,
    AgentConfigSetLLMParamsResponse,
    'Replace the LLM parameters.',
  ],
  [
    'agent_config.set_llm_provider',
    'AgentConfigSetLLMProvider',
    false,
    AgentConfigSetLLMProviderRequest,
    AgentConfigSetLLMProviderResponse,
    'Install the LLM provider.',
  ],
  [
    'agent_config.set_mcp_discovery_origins',
    'AgentConfigSetMCPDiscoveryOrigins',
    false,
    AgentConfigSetMCPDiscoveryOriginsRequest,
    AgentConfigSetMCPDiscoveryOriginsResponse,
    'Replace the MCP discovery origins.',
  ],
  [
    'agent_config.set_oauth_provider',
    'AgentConfigSetOAuthProvider',
    false,
    AgentConfigSetOAuthProviderRequest,
    AgentConfigSetOAuthProviderResponse,
    'Install or replace an OAuth provider.',
  ],
  [
    'agent_config.set_prompt_layers',
    'AgentConfigSetPromptLayers',
    false,
    AgentConfigSetPromptLayersRequest,
    AgentConfigSetPromptLayersResponse,
    'Replace the prompt layers.',
  ],
  [
    'agent_config.set_revision',
    'AgentConfigSetRevision',
    false,
    AgentConfigSetRevisionRequest,
    AgentConfigSetRevisionResponse,
    'Write a whole configuration as the new head revision.',
  ],
  [
    'agent_config.set_tool_exposure',
    'AgentConfigSetToolExposure',
    false,
    AgentConfigSetToolExposureRequest,
    AgentConfigSetToolExposureResponse,
    'Replace the tool exposure.',
  ],
  [
    'agent_config.skills.delete',
    'AgentConfigSkillsDelete',
    false,
    AgentConfigSkillsDeleteRequest,
    AgentConfigSkillsDeleteResponse,
    'Delete a tenant or agent skill.',
  ],
  [
    'agent_config.skills.list',
    'AgentConfigSkillsList',
    true,
    AgentConfigSkillsListRequest,
    AgentConfigSkillsListResponse,
    'List tenant or agent skills.',
  ],
  [
    'agent_config.skills.upsert',
    'AgentConfigSkillsUpsert',
    false,
    AgentConfigSkillsUpsertRequest,
    AgentConfigSkillsUpsertResponse,
    'Create or replace a tenant or agent skill.',
  ],
];

/** The admin tier of agent_config (A; M unless R): `/v1/agent_config/<path>`. */
export const AGENT_CONFIG_ADMIN_METHODS: readonly MethodDef[] = ADMIN_ROWS.map(
  ([name, stem, read, request, response, summary]) =>
    defineMethod({
      name,
      family: 'agent_config',
      ...onFamily(name),
      service: 'agent-registry',
      auth: read ? ['R', 'A'] : ['M', 'A'],
      requestName: `${stem}Request`,
      responseName: `${stem}Response`,
      request,
      response,
      summary,
    }),
);

export type AgentConfigAddMCPConnectionRequest = z.infer<typeof AgentConfigAddMCPConnectionRequest>;
export type AgentConfigDiffRequest = z.infer<typeof AgentConfigDiffRequest>;
export type AgentConfigDiffResponse = z.infer<typeof AgentConfigDiffResponse>;
export type AgentConfigGetRequest = z.infer<typeof AgentConfigGetRequest>;
export type AgentConfigGetResponse = z.infer<typeof AgentConfigGetResponse>;
export type AgentConfigListRevisionsRequest = z.infer<typeof AgentConfigListRevisionsRequest>;
export type AgentConfigListRevisionsResponse = z.infer<typeof AgentConfigListRevisionsResponse>;
export type AgentConfigRegisterOAuthMCPCapabilityRequest = z.infer<typeof AgentConfigRegisterOAuthMCPCapabilityRequest>;
export type AgentConfigRemoveMCPConnectionRequest = z.infer<typeof AgentConfigRemoveMCPConnectionRequest>;
export type AgentConfigRemoveOAuthMCPCapabilityRequest = z.infer<typeof AgentConfigRemoveOAuthMCPCapabilityRequest>;
export type AgentConfigRemoveOAuthProviderRequest = z.infer<typeof AgentConfigRemoveOAuthProviderRequest>;
export type AgentConfigRetireRequest = z.infer<typeof AgentConfigRetireRequest>;
export type AgentConfigRetireResponse = z.infer<typeof AgentConfigRetireResponse>;
export type AgentConfigRollbackRequest = z.infer<typeof AgentConfigRollbackRequest>;
export type AgentConfigSetExtraSystemBlocksRequest = z.infer<typeof AgentConfigSetExtraSystemBlocksRequest>;
export type AgentConfigSetLLMParamsRequest = z.infer<typeof AgentConfigSetLLMParamsRequest>;
export type AgentConfigSetLLMProviderRequest = z.infer<typeof AgentConfigSetLLMProviderRequest>;
export type AgentConfigSetMCPDiscoveryOriginsRequest = z.infer<typeof AgentConfigSetMCPDiscoveryOriginsRequest>;
export type AgentConfigSetOAuthProviderRequest = z.infer<typeof AgentConfigSetOAuthProviderRequest>;
export type AgentConfigSetPromptLayersRequest = z.infer<typeof AgentConfigSetPromptLayersRequest>;
export type AgentConfigSetRevisionRequest = z.infer<typeof AgentConfigSetRevisionRequest>;
export type AgentConfigSetToolExposureRequest = z.infer<typeof AgentConfigSetToolExposureRequest>;
export type AgentConfigSkillsDeleteRequest = z.infer<typeof AgentConfigSkillsDeleteRequest>;
export type AgentConfigSkillsDeleteResponse = z.infer<typeof AgentConfigSkillsDeleteResponse>;
export type AgentConfigSkillsListRequest = z.infer<typeof AgentConfigSkillsListRequest>;
export type AgentConfigSkillsListResponse = z.infer<typeof AgentConfigSkillsListResponse>;
export type AgentConfigSkillsUpsertRequest = z.infer<typeof AgentConfigSkillsUpsertRequest>;
export type AgentConfigSkillsUpsertResponse = z.infer<typeof AgentConfigSkillsUpsertResponse>;
export type AgentConfigAddMCPConnectionResponse = z.infer<typeof AgentConfigAddMCPConnectionResponse>;
export type AgentConfigRegisterOAuthMCPCapabilityResponse = z.infer<
  typeof AgentConfigRegisterOAuthMCPCapabilityResponse
>;
export type AgentConfigRemoveMCPConnectionResponse = z.infer<typeof AgentConfigRemoveMCPConnectionResponse>;
export type AgentConfigRemoveOAuthMCPCapabilityResponse = z.infer<typeof AgentConfigRemoveOAuthMCPCapabilityResponse>;
export type AgentConfigRemoveOAuthProviderResponse = z.infer<typeof AgentConfigRemoveOAuthProviderResponse>;
export type AgentConfigRollbackResponse = z.infer<typeof AgentConfigRollbackResponse>;
export type AgentConfigSetExtraSystemBlocksResponse = z.infer<typeof AgentConfigSetExtraSystemBlocksResponse>;
export type AgentConfigSetLLMParamsResponse = z.infer<typeof AgentConfigSetLLMParamsResponse>;
export type AgentConfigSetLLMProviderResponse = z.infer<typeof AgentConfigSetLLMProviderResponse>;
export type AgentConfigSetMCPDiscoveryOriginsResponse = z.infer<typeof AgentConfigSetMCPDiscoveryOriginsResponse>;
export type AgentConfigSetOAuthProviderResponse = z.infer<typeof AgentConfigSetOAuthProviderResponse>;
export type AgentConfigSetPromptLayersResponse = z.infer<typeof AgentConfigSetPromptLayersResponse>;
export type AgentConfigSetRevisionResponse = z.infer<typeof AgentConfigSetRevisionResponse>;
export type AgentConfigSetToolExposureResponse = z.infer<typeof AgentConfigSetToolExposureResponse>;
