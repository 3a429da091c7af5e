import type { z } from 'zod';
import {
  AgentConfigAddMCPConnectionRequest,
  AgentConfigRegisterOAuthMCPCapabilityRequest,
  AgentConfigRemoveMCPConnectionRequest,
  AgentConfigRemoveOAuthMCPCapabilityRequest,
  AgentConfigRemoveOAuthProviderRequest,
  AgentConfigSetExtraSystemBlocksRequest,
  AgentConfigSetLLMParamsRequest,
  AgentConfigSetLLMProviderRequest,
  AgentConfigSetMCPDiscoveryOriginsRequest,
  AgentConfigSetOAuthProviderRequest,
  AgentConfigSetPromptLayersRequest,
  AgentConfigSetToolExposureRequest,
} from '@ars/contracts';
import type { AgentConfigContent, IdentityScope, VerifiedIdentity } from '@ars/contracts';
import { typedMethod } from '@ars/service-kit';
import type { RpcHandler } from '@ars/bus';
import {
  addMcpConnection,
  normaliseOrigins,
  originsChange,
  registerOAuthMcpCapability,
  removeMcpConnection,
  removeOAuthMcpCapability,
  removeOAuthProvider,
  setOAuthProvider,
} from '../domain/config-setters.ts';
import type { RevisionRecord } from '../store/revision.repository.ts';
import { admitAdmin } from './agent-config-revisions.handler.ts';
import type { RevisionHandlerDeps } from './agent-config-revisions.handler.ts';
import { initialConfig, refuseIfRetired } from './agent-state.ts';
import { toRevisionView } from './revision-tier.ts';
import { authorOf, eventIdentityOf, writeDerived } from './revision-writer.ts';

/** The members every setter request has. */
interface SetterBody {
  readonly identity?: IdentityScope;
  readonly agent_id: string;
  readonly parent_revision_id?: string | undefined;
  readonly message?: string | undefined;
}

/** What a setter's own event needs. */
interface Written<B> {
  readonly caller: VerifiedIdentity;
  readonly body: B;
  readonly record: RevisionRecord;
  readonly previous: RevisionRecord | null;
}

/** One setter: the member edit, and the event it publishes after `agent.config.revised`. */
interface SetterSpec<B extends SetterBody> {
  readonly derive: (config: AgentConfigContent, body: B) => AgentConfigContent;
  readonly publish?: (deps: RevisionHandlerDeps, written: Written<B>) => Promise<unknown>;
}

/**
 * An admin setter: a new head revision derived from the current one with one
 * member edited (`parent_revision_id` as everywhere: stale → 409 `conflict`),
 * `agent.config.revised`, then the setter's own event. An agent without a
 * revision starts from `{}` (the default agent from its built-in
 * configuration); a retired agent is refused 409 `conflict`.
 */
function setter<B extends SetterBody>(
  deps: RevisionHandlerDeps,
  schema: z.ZodType<B>,
  spec: SetterSpec<NoInfer<B>>,
): RpcHandler {
  return typedMethod(schema, async ({ method, identity, body: request }) => {
    const caller = admitAdmin(method, identity, request);
    await refuseIfRetired(deps, caller.tenant, request.agent_id, method);
    const { record, previous } = await writeDerived(deps.revisions, deps.publisher, {
      lineage: { tenant: caller.tenant, agent_id: request.agent_id },
      caller,
      parentRevisionId: request.parent_revision_id,
      message: request.message,
      initial: initialConfig(deps, request.agent_id),
      derive: (config) => spec.derive(config, request),
    });
    await spec.publish?.(deps, { caller, body: request, record, previous });
    return { revision: toRevisionView(record) };
  });
}

/** Publishes one of this file's events about a written revision. */
function publishAbout(deps: RevisionHandlerDeps, written: Written<unknown>, type: string, payload: object) {
  return deps.publisher.publish({
    type,
    identity: eventIdentityOf(written.caller),
    eventId: `${type}:${written.record.revision_id}`,
    occurredAt: written.record.created_at,
    payload: { ...payload, OccurredAt: written.record.created_at },
  });
}

const installLlmProvider: SetterSpec<AgentConfigSetLLMProviderRequest> = {
  derive: (config, body) => ({ ...config, llm_provider: body.provider }),
  publish: (deps, written) =>
    publishAbout(deps, written, 'agent_config.llm_provider.installed', {
      Author: authorOf(written.caller),
      AgentID: written.record.agent_id,
      ProviderName: written.body.provider.provider_name,
      Provider: written.body.provider.provider,
      InferenceBroker: written.body.provider.inference_broker ?? '',
    }),
};

const addConnection: SetterSpec<AgentConfigAddMCPConnectionRequest> = {
  derive: (config, body) => addMcpConnection(config, body.connection),
  publish: (deps, written) =>
    publishAbout(deps, written, 'mcp.connection.added', {
      Author: authorOf(written.caller),
      AgentID: written.record.agent_id,
      ServerID: written.body.connection.server_id,
      Transport: written.body.connection.transport,
      State: 'configured',
      RevisionID: written.record.revision_id,
      PauseToken: '',
      Reason: '',
    }),
};

const removeConnection: SetterSpec<AgentConfigRemoveMCPConnectionRequest> = {
  derive: (config, body) => removeMcpConnection(config, body.server_id),
  publish: (deps, written) =>
    publishAbout(deps, written, 'mcp.connection.removed', {
      Author: authorOf(written.caller),
      AgentID: written.record.agent_id,
      ServerID: written.body.server_id,
      RevisionID: written.record.revision_id,
    }),
};

const setDiscoveryOrigins: SetterSpec<AgentConfigSetMCPDiscoveryOriginsRequest> = {
  derive: (config, body) => ({ ...config, mcp_discovery_origins: normaliseOrigins(body.origins) }),
  publish: (deps, written) => {
    const { granted, revoked } = originsChange(
      written.previous?.config.mcp_discovery_origins ?? [],
      written.record.config.mcp_discovery_origins ?? [],
    );
    // The allow-list is the agent's, not one server's: ServerID is empty.
    return publishAbout(deps, written, 'mcp.connection.discovery_origins_set', {
      Author: authorOf(written.caller),
      AgentID: written.record.agent_id,
      ServerID: '',
      RevisionID: written.record.revision_id,
      Granted: granted,
      Revoked: revoked,
    });
  },
};

const installOAuthProvider: SetterSpec<AgentConfigSetOAuthProviderRequest> = {
  derive: (config, body) => setOAuthProvider(config, body.provider),
  publish: (deps, written) =>
    publishAbout(deps, written, 'agent_config.oauth_provider.installed', {
      Author: authorOf(written.caller),
      AgentID: written.record.agent_id,
      ProviderName: written.body.provider.provider_name,
      CredentialBroker: written.body.provider.credential_broker,
      RevisionID: written.record.revision_id,
    }),
};

const uninstallOAuthProvider: SetterSpec<AgentConfigRemoveOAuthProviderRequest> = {
  derive: (config, body) => removeOAuthProvider(config, body.provider_name),
  publish: (deps, written) => {
    const removed = written.previous?.config.oauth_providers?.find(
      (p) => p.provider_name === written.body.provider_name,
    );
    return publishAbout(deps, written, 'agent_config.oauth_provider.removed', {
      Author: authorOf(written.caller),
      AgentID: written.record.agent_id,
      ProviderName: written.body.provider_name,
      CredentialBroker: removed?.credential_broker ?? '',
      RevisionID: written.record.revision_id,
    });
  },
};

/** Every admin setter, by registry name. */
export function createSetterHandlers(deps: RevisionHandlerDeps): Record<string, RpcHandler> {
  return {
    'agent_config.set_prompt_layers': setter(deps, AgentConfigSetPromptLayersRequest, {
      derive: (config, body) => ({ ...config, prompt_layers: body.layers }),
    }),
    'agent_config.set_extra_system_blocks': setter(deps, AgentConfigSetExtraSystemBlocksRequest, {
      derive: (config, body) => ({ ...config, extra_system_blocks: body.blocks }),
    }),
    'agent_config.set_llm_provider': setter(deps, AgentConfigSetLLMProviderRequest, installLlmProvider),
    'agent_config.set_llm_params': setter(deps, AgentConfigSetLLMParamsRequest, {
      derive: (config, body) => ({ ...config, llm_params: body.params }),
    }),
    'agent_config.set_tool_exposure': setter(deps, AgentConfigSetToolExposureRequest, {
      derive: (config, body) => ({ ...config, tool_exposure: body.exposure }),
    }),
    'agent_config.add_mcp_connection': setter(deps, AgentConfigAddMCPConnectionRequest, addConnection),
    'agent_config.remove_mcp_connection': setter(deps, AgentConfigRemoveMCPConnectionRequest, removeConnection),
    'agent_config.set_mcp_discovery_origins': setter(
      deps,
      AgentConfigSetMCPDiscoveryOriginsRequest,
      setDiscoveryOrigins,
    ),
    'agent_config.set_oauth_provider': setter(deps, AgentConfigSetOAuthProviderRequest, installOAuthProvider),
    'agent_config.remove_oauth_provider': setter(deps, AgentConfigRemoveOAuthProviderRequest, uninstallOAuthProvider),
    'agent_config.register_oauth_mcp_capability': setter(deps, AgentConfigRegisterOAuthMCPCapabilityRequest, {
      derive: (config, body) => registerOAuthMcpCapability(config, body.capability),
    }),
    'agent_config.remove_oauth_mcp_capability': setter(deps, AgentConfigRemoveOAuthMCPCapabilityRequest, {
      derive: (config, body) => removeOAuthMcpCapability(config, body.server_id, body.provider_name),
    }),
  };
}
