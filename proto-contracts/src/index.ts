/**
 * @ars/contracts: the wire contract of the Agent Run Service. The method
 * registry (126), the event registry (146), the internal endpoint registry
 * (service-to-service calls, with their refusal reasons), zod schemas, error
 * codes and the RPC error reply, limits and the protocol version; emits
 * OpenAPI 3.1 and JSON Schema.
 */
export { PROTOCOL_VERSION, parseSemver, isCompatibleVersion, DEPRECATIONS } from './version.ts';
export type { DeprecationNotice } from './version.ts';
export { ERROR_CODES, ServiceError, isServiceError, isErrorCode, toServiceError } from './errors.ts';
export type { ErrorCode, ErrorEnvelope } from './errors.ts';
export { ErrorReply, fromErrorReply, toErrorReply } from './error-reply.ts';
export { describeFirstIssue } from './zod-issues.ts';
export { CONTROL_PAYLOAD_LIMITS, START_QUERY_MAX_CHARS, characterCount, checkPayloadBounds } from './limits.ts';
export type { PayloadBoundViolation } from './limits.ts';
export { IdentityScope, IdentityQuad, IdentityTriple, SCOPES, STEERING_TIERS } from './identity.ts';
export type { Scope, SteeringTier, VerifiedIdentity } from './identity.ts';
export { SERVICE_NAMES, defineMethod } from './method-def.ts';
export type { ServiceName, AuthClass, CrossingClaim, IdentityCrossing, RouteSurface, MethodDef } from './method-def.ts';
export { defineEvent, EventFrame } from './event-def.ts';
export type { EventClass, EventDef } from './event-def.ts';

// Shared schema pieces.
export {
  Timestamp,
  JsonObject,
  VerbatimJsonObject,
  ProtocolVersion,
  PAGE_LIMITS,
  PageLimit,
  Cursor,
  Sequence,
  Id,
} from './schemas/common.ts';
export {
  TASK_STATUSES,
  TaskStatus,
  TERMINAL_TASK_STATUSES,
  Disposition,
  InputArtifact,
  StatusCounts,
  Task,
  SessionRef,
  TaskRef,
  StepCost,
  CostTotal,
  TrajectoryRef,
  TaskListFilter,
  PAUSE_KINDS,
  PauseKind,
  PausedRun,
  PauseListFilter,
} from './schemas/task.ts';
export {
  SESSION_STATUSES,
  SessionStatus,
  TitleSource,
  Session,
  SessionsListFilter,
  StateRecordKind,
  StateRecord,
  StateHistoryFilter,
} from './schemas/session.ts';
export { ArtifactMetadata, MimeType, Checksum, ArtifactsListFilter } from './schemas/artifact.ts';
export { EventsFilter, EventBucket } from './schemas/event.ts';
export { SEARCH_KINDS, SearchKind, SearchFilter, SearchHit } from './schemas/search.ts';
export {
  CAPABILITIES,
  RuntimeInfo,
  HealthStatus,
  RuntimeHealth,
  EndpointCounters,
  RuntimeCounters,
  DriverInfo,
  RuntimeDrivers,
  MetricsSnapshot,
  ServiceInstance,
  TopologyProjection,
} from './schemas/runtime.ts';
export type { Capability } from './schemas/runtime.ts';
export {
  ReasoningEffort,
  Temperature,
  LlmOverrides,
  LlmOverridesView,
  RunOverrides,
  RunOverridesView,
  BudgetPeriod,
  Budget,
  RateLimit,
  RateLimitUnit,
  RateLimitPolicy,
  MAX_REFILL_EVERY_MS,
  MaxTokensPolicy,
  FailoverProvider,
  GovernanceTier,
  BudgetUsage,
  LlmProviderPosture,
  TargetTenant,
} from './schemas/governance.ts';
export {
  MEMORY_TIERS,
  MemoryTier,
  MemoryKey,
  MemoryItem,
  MemoryListFilter,
  MemoryHealth,
  StrategyTraceEntry,
} from './schemas/memory.ts';
export {
  SIDE_EFFECT_CLASSES,
  SideEffectClass,
  ApprovalPolicy,
  Tool,
  ToolManifest,
  ToolContentStatsEntry,
  ToolMetricsEntry,
} from './schemas/tool.ts';
export {
  FLOW_STATUSES,
  FLOW_STEP_STATUSES,
  Flow,
  FlowRun,
  FlowMetricsEntry,
  FlowStepState,
  FlowUsage,
} from './schemas/flow.ts';
export {
  FLOW_BUDGET_AXES,
  FLOW_END_TARGETS,
  FLOW_JOINS,
  FLOW_MAX_BRANCHES,
  FLOW_MAX_STEPS,
  FLOW_OUTCOMES,
  FLOW_STEP_ID_PATTERN,
  FLOW_TEMPLATE_MAX_CHARS,
  FlowBranchCase,
  FlowBranchStep,
  FlowBudget,
  FlowCondition,
  FlowDefinition,
  FlowParallelStep,
  FlowRunSpec,
  FlowRunStep,
  FlowStep,
  FlowStepId,
  FlowTarget,
  FlowTemplate,
  flowTemplateReferences,
} from './schemas/flow-definition.ts';
export type { FlowBudgetAxis, FlowOutcome, FlowTemplateReference } from './schemas/flow-definition.ts';
export {
  AGENT_COMMANDS,
  AGENT_HEALTHS,
  AGENT_STATES,
  AgentCommand,
  AgentState,
  Agent,
  AgentPermission,
  FLEET_AGENT_KEY_PREFIX,
  FLEET_PAUSE_REASON,
  FleetEntry,
} from './schemas/agent.ts';
export type { AgentHealth } from './schemas/agent.ts';
export { McpTransport, McpServer, McpBinding } from './schemas/mcp.ts';
export {
  AgentId,
  PromptLayer,
  SystemBlock,
  LLM_PROVIDER_KINDS,
  LlmProviderConfig,
  LlmParams,
  ToolExposure,
  McpConnection,
  OAuthProviderConfig,
  OAuthMcpCapability,
  AgentConfigContent,
  AgentConfigRevision,
  AgentConfigRevisionSummary,
  ConfigChange,
  SkillName,
  SkillOrigin,
  Skill,
  SkillView,
} from './schemas/agent-config.ts';

// The method registry and its request and response schemas.
export { METHODS, getMethod, findRoute, methodsOfService } from './methods/index.ts';
export { CONTROL_ROUTE_PREFIX, controlRoute, familyRoute } from './methods/routing.ts';
export {
  StartRequest,
  StartResponse,
  STEERING_CONTROLS,
  STEERING_MINIMUMS,
  CONTROL_PAYLOADS,
  CONTROL_PAYLOAD_REQUIRED,
  ControlIdentity,
  ControlRequest,
  controlRequestFor,
  ControlResponse,
} from './methods/start-steering.ts';
export type { SteeringControl } from './methods/start-steering.ts';
export {
  TaskGetRequest,
  TaskDetail,
  TaskListRequest,
  TaskListResponse,
  PauseListRequest,
  PauseListResponse,
} from './methods/tasks.ts';
export {
  EVENTS_SUBSCRIBE_ROUTE,
  EVENTS_SUBSCRIBE_INPUTS,
  EventsSubscribeRequest,
  EventsListRequest,
  EventsListResponse,
  EVENT_BUCKET_SECONDS,
  EventAggregateRequest,
  EventAggregateResponse,
} from './methods/events.ts';
export {
  SessionsDeleteRequest,
  SessionsDeleteResponse,
  SessionsInspectRequest,
  SessionsInspectResponse,
  SessionsListRequest,
  SessionsListResponse,
  SESSION_TITLE_MAX,
  SessionsSetTitleRequest,
  SessionsSetTitleResponse,
} from './methods/sessions.ts';
export { SearchRequest, SearchResponse } from './methods/search.ts';
export { RuntimeInfoRequest, GovernancePostureResponse, LLMPostureResponse } from './methods/posture.ts';
export { TopologySnapshotRequest } from './methods/topology.ts';
export {
  ARTIFACT_REF_TTL_SECONDS,
  ArtifactsPutRequest,
  ArtifactsPutResponse,
  ArtifactsGetRequest,
  ArtifactsGetResponse,
  ArtifactsGetRefRequest,
  ArtifactsGetRefResponse,
  ArtifactsListRequest,
  ArtifactsListResponse,
  ArtifactsDeleteRequest,
  ArtifactsDeleteResponse,
} from './methods/artifacts.ts';
export {
  MemoryPutRequest,
  MemoryPutResponse,
  MemoryGetRequest,
  MemoryGetResponse,
  MemoryListRequest,
  MemoryListResponse,
  MemoryDeleteRequest,
  MemoryDeleteResponse,
  MemoryHealthRequest,
  MemoryHealthResponse,
  MemoryStrategyTraceRequest,
  MemoryStrategyTraceResponse,
} from './methods/memory.ts';
export {
  ToolContentStatsRequest,
  ToolContentStats,
  ToolDescribeRequest,
  ToolGetRequest,
  ToolListRequest,
  ToolListResponse,
  ToolMetricsRequest,
  ToolMetrics,
  ToolRevokeOAuthRequest,
  ToolRevokeOAuthResponse,
  ToolSetApprovalPolicyRequest,
  ToolSetApprovalPolicyResponse,
} from './methods/tools.ts';
export {
  FlowDescribeRequest,
  FlowDescription,
  FlowListRequest,
  FlowListResponse,
  FlowMetricsRequest,
  FlowMetrics,
  FlowRunRequest,
  FlowRunResponse,
  FlowRunDescribeRequest,
  FlowRunDescription,
  FlowRunsListRequest,
  FlowRunsListResponse,
} from './methods/flows.ts';
export {
  AgentControlRequest,
  AgentControlResponse,
  AgentGetRequest,
  AgentGetResponse,
  AgentGovernanceRequest,
  AgentGovernanceResponse,
  AgentListFilter,
  AgentListRequest,
  AgentListResponse,
  AgentMemoryRequest,
  AgentMemoryResponse,
  AgentMetricsRequest,
  AgentMetricsResponse,
  AgentPermissionsRequest,
  AgentPermissionsResponse,
  AgentSkillsRequest,
  AgentSkillsResponse,
  AgentToolsRequest,
  AgentToolsResponse,
} from './methods/agents.ts';
export {
  MCPServerBindingsListRequest,
  MCPServerBindingsListResponse,
  MCPServerGetRequest,
  MCPServerGetResponse,
  MCPServerHealthRequest,
  MCPServerHealthResponse,
  MCPServersListRequest,
  MCPServersListResponse,
  MCPServerPolicyRequest,
  MCPServerPolicyResponse,
  MCPServerProbeRequest,
  MCPServerProbeResponse,
  MCPServerPromptsRequest,
  MCPServerPromptsResponse,
  MCPServerRefreshBindingRequest,
  MCPServerRefreshBindingResponse,
  MCPServerRefreshDiscoveryRequest,
  MCPServerRefreshDiscoveryResponse,
  MCPServerResourcesRequest,
  MCPServerResourcesResponse,
  MCPServerRevokeBindingRequest,
  MCPServerRevokeBindingResponse,
  MCPServerSetRawHTMLTrustRequest,
  MCPServerSetRawHTMLTrustResponse,
  MCPAppCallToolRequest,
  MCPAppCallToolResponse,
  ToolContextRequest,
  ToolContextResponse,
  ReadMCPResourceRequest,
  ReadMCPResourceResponse,
  McpAppUi,
  McpEgress,
} from './methods/mcp.ts';
export {
  RunSetOverridesRequest,
  RunSetOverridesResponse,
  StateHistoryRequest,
  StateHistoryResponse,
  ROTATED_TOKEN_TTL_SECONDS,
  AuthRotateTokenRequest,
  AuthRotateTokenResponse,
  GovernanceGetTenantOverridesRequest,
  GovernanceGetTenantOverridesResponse,
  GovernanceSetTenantOverridesRequest,
  GovernanceSetTenantOverridesResponse,
  GovernanceRotateKeyRequest,
  GovernanceRotateKeyResponse,
  GovernanceSetPostureRequest,
  GovernanceSetPostureResponse,
} from './methods/runs-state-auth-governance.ts';
export {
  AgentConfigAddMCPConnectionRequest,
  AgentConfigDiffRequest,
  AgentConfigDiffResponse,
  AgentConfigGetRequest,
  AgentConfigGetResponse,
  AgentConfigListRevisionsRequest,
  AgentConfigListRevisionsResponse,
  AgentConfigRegisterOAuthMCPCapabilityRequest,
  AgentConfigRemoveMCPConnectionRequest,
  AgentConfigRemoveOAuthMCPCapabilityRequest,
  AgentConfigRemoveOAuthProviderRequest,
  AgentConfigRetireRequest,
  AgentConfigRetireResponse,
  AgentConfigRollbackRequest,
  AgentConfigSetExtraSystemBlocksRequest,
  AgentConfigSetLLMParamsRequest,
  AgentConfigSetLLMProviderRequest,
  AgentConfigSetMCPDiscoveryOriginsRequest,
  AgentConfigSetOAuthProviderRequest,
  AgentConfigSetPromptLayersRequest,
  AgentConfigSetRevisionRequest,
  AgentConfigSetToolExposureRequest,
  AgentConfigSkillsDeleteRequest,
  AgentConfigSkillsDeleteResponse,
  AgentConfigSkillsListRequest,
  AgentConfigSkillsListResponse,
  AgentConfigSkillsUpsertRequest,
  AgentConfigSkillsUpsertResponse,
  AgentConfigAddMCPConnectionResponse,
  AgentConfigRegisterOAuthMCPCapabilityResponse,
  AgentConfigRemoveMCPConnectionResponse,
  AgentConfigRemoveOAuthMCPCapabilityResponse,
  AgentConfigRemoveOAuthProviderResponse,
  AgentConfigRollbackResponse,
  AgentConfigSetExtraSystemBlocksResponse,
  AgentConfigSetLLMParamsResponse,
  AgentConfigSetLLMProviderResponse,
  AgentConfigSetMCPDiscoveryOriginsResponse,
  AgentConfigSetOAuthProviderResponse,
  AgentConfigSetPromptLayersResponse,
  AgentConfigSetRevisionResponse,
  AgentConfigSetToolExposureResponse,
} from './methods/agent-config.ts';
export {
  AgentConfigSessionSetSourceDisablesRequest,
  AgentConfigSessionSetSourceDisablesResponse,
  AgentConfigSessionSetUserPromptRequest,
  AgentConfigSessionSetUserPromptResponse,
  AgentConfigSessionSkillsDeleteRequest,
  AgentConfigSessionSkillsDeleteResponse,
  AgentConfigSessionSkillsListRequest,
  AgentConfigSessionSkillsListResponse,
  AgentConfigSessionSkillsUpsertRequest,
  AgentConfigSessionSkillsUpsertResponse,
  AgentConfigUserSkillsDeleteRequest,
  AgentConfigUserSkillsDeleteResponse,
  AgentConfigUserSkillsListRequest,
  AgentConfigUserSkillsListResponse,
  AgentConfigUserSkillsUpsertRequest,
  AgentConfigUserSkillsUpsertResponse,
  AgentConfigUserDiffRequest,
  AgentConfigUserDiffResponse,
  AgentConfigUserGetRequest,
  AgentConfigUserGetResponse,
  AgentConfigUserListRevisionsRequest,
  AgentConfigUserListRevisionsResponse,
  AgentConfigUserRollbackRequest,
  AgentConfigUserRollbackResponse,
  AgentConfigUserSetRevisionRequest,
  AgentConfigUserSetRevisionResponse,
} from './methods/agent-config-tiers.ts';

// The internal endpoint registry (service-to-service calls) and its schemas.
export {
  defineInternalEndpoint,
  parseInternalReply,
  parseInternalRequest,
  refuse,
  refusalOf,
  serviceCallerIdentity,
} from './internal-def.ts';
export type {
  InternalEndpointDef,
  InternalGate,
  InternalParsedRequest,
  InternalReply,
  InternalReplyOut,
  InternalRequest,
  RefusalDef,
  RefusalReason,
} from './internal-def.ts';
export { INTERNAL_ENDPOINTS, getInternalEndpoint, internalEndpointsOfService } from './internal/index.ts';
export { OwnerTriple } from './internal/shapes.ts';
export { SESSION_ADMIT, SessionAdmitRequest, SessionAdmitReply } from './internal/session.ts';
export {
  AgentOutcomes,
  AgentRunCounts,
  GOVERNANCE_TENANT_BUDGET,
  GovernanceTenantBudgetReply,
  GovernanceTenantBudgetRequest,
  MEMORY_TENANT_USAGE,
  MemoryTenantUsageReply,
  MemoryTenantUsageRequest,
  MemoryTierUsage,
  TASKS_AGENT_METRICS,
  TASKS_AGENT_OUTCOMES,
  TASKS_AGENT_RUNS,
  TasksAgentMetricsReply,
  TasksAgentMetricsRequest,
  TasksAgentOutcomesReply,
  TasksAgentOutcomesRequest,
  TasksAgentRunsReply,
  TasksAgentRunsRequest,
} from './internal/fleet.ts';
export {
  AGENT_RESOLVE,
  AgentResolveRequest,
  AgentResolveReply,
  AGENT_EFFECTIVE_CONFIG,
  AgentEffectiveConfigRequest,
  AgentEffectiveConfigReply,
  AGENT_ERASE_SESSION,
  AgentEraseSessionReply,
  EffectiveLayer,
  EffectiveSkill,
} from './internal/agent.ts';
export {
  BlobLocation,
  ARTIFACT_RESOLVE,
  ArtifactResolveRequest,
  ArtifactResolveReply,
  ResolvedArtifact,
  ARTIFACT_ERASE_SESSION,
  ArtifactEraseSessionReply,
  ARTIFACT_UPLOAD_BEGIN,
  ArtifactUploadBeginRequest,
  ArtifactUploadBeginReply,
  ARTIFACT_UPLOAD_ABORT,
  ArtifactUploadAbortRequest,
  ArtifactUploadAbortReply,
  ARTIFACT_DOWNLOAD_BEGIN,
  ArtifactDownloadBeginRequest,
  ArtifactDownloadBeginReply,
} from './internal/artifact.ts';
export {
  GovernanceRunIdentity,
  SpendWindowView,
  GOVERNANCE_ADMIT_LLM_CALL,
  GovernanceAdmitLlmCallRequest,
  GovernanceAdmitLlmCallReply,
  GOVERNANCE_RECORD_COST,
  GovernanceRecordCostRequest,
  GovernanceRecordCostReply,
  GOVERNANCE_RECORD_COSTS,
  GovernanceRecordCostsRequest,
  GovernanceRecordCostsReply,
  MAX_RECORDED_COSTS,
  GOVERNANCE_ADMISSION_POSTURE,
  GovernanceAdmissionPostureRequest,
  GovernanceAdmissionPostureReply,
  GOVERNANCE_FAILOVER,
  GovernanceFailoverRequest,
  GovernanceFailoverReply,
  GOVERNANCE_EFFECTIVE_OVERRIDES,
  GovernanceEffectiveOverridesRequest,
  GovernanceEffectiveOverridesReply,
  GOVERNANCE_PROVIDER_KEY,
  GovernanceProviderKeyRequest,
  GovernanceProviderKeyReply,
  GOVERNANCE_RECORD_TOKEN_ROTATION,
  GovernanceRecordTokenRotationRequest,
  GovernanceRecordTokenRotationReply,
  SecretPurpose,
  SealedSecretView,
  GOVERNANCE_SEAL_SECRET,
  GovernanceSealSecretRequest,
  GovernanceSealSecretReply,
  GOVERNANCE_OPEN_SECRET,
  GovernanceOpenSecretRequest,
  GovernanceOpenSecretReply,
} from './internal/governance.ts';
export { TASKS_ERASE_SESSION, TasksEraseSessionReply } from './internal/tasks.ts';
export {
  MEMORY_PROMPT_BLOCKS,
  MemoryPromptBlocksRequest,
  MemoryPromptBlocksReply,
  MemoryBlock,
  MEMORY_ERASE_SESSION,
  MemoryEraseSessionReply,
  MEMORY_CALLER_READ,
  MemoryCallerReadRequest,
  MemoryCallerReadReply,
  MEMORY_CALLER_WRITE,
  MemoryCallerWriteRequest,
  MemoryCallerWriteReply,
} from './internal/memory.ts';

// The event registry.
export { EVENTS, getEvent } from './events/index.ts';
export { NOTIFICATION_TYPES, NotificationPayload } from './events/notification.ts';
export { AdminScopeUsedSubscription, AdminScopeUsedEdge } from './events/audit.ts';

// Emitters.
export { JSON_SCHEMA_DIALECT, toJsonSchema } from './json-schema.ts';
export type { JsonSchema } from './json-schema.ts';
export { buildOpenApiDocument } from './openapi.ts';
export type { OpenApiOptions, OpenApiDocument } from './openapi.ts';
export { EVENT_SCHEMA_ANNOTATIONS, buildEventJsonSchemas } from './event-schemas.ts';
export type { EventJsonSchemas } from './event-schemas.ts';
export {
  ARTIFACT_URI_PREFIX,
  artifactUri,
  CatalogueTool,
  MCP_CALL_TOOL,
  MCP_CANCEL_CALL,
  MCP_TOOL_NAME_SEPARATOR,
  McpCallToolReply,
  McpCallToolRequest,
  McpCancelCallReply,
  McpCancelCallRequest,
  OffloadedPart,
  TOOLS_CATALOGUE,
  TOOLS_RECORD_CALLS,
  ToolCallRecord,
  ToolsCatalogueReply,
  ToolsCatalogueRequest,
  ToolsRecordCallsReply,
  ToolsRecordCallsRequest,
} from './internal/tools.ts';
export {
  AuthCompletionEnvelope,
  AuthRequiredServer,
  BindingScope,
  OAUTH_BEGIN,
  OAUTH_COMPLETE,
  OAuthBeginReply,
  OAuthBeginRequest,
  OAuthCompleteReply,
  OAuthCompleteRequest,
} from './internal/oauth.ts';
export {
  BUILTIN_TOOL_BOUNDS,
  BUILTIN_TOOL_MANIFESTS,
  BUILTIN_TRANSPORT,
  argumentsJsonSchema,
  artifactReadArgs,
  artifactWriteArgs,
  getBuiltinToolManifest,
} from './tools/builtin-manifests.ts';
export type { BuiltinToolManifest } from './tools/builtin-manifests.ts';
