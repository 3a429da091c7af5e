import { AgentConfigSessionSetSourceDisablesRequest, AgentConfigSessionSetUserPromptRequest } from '@ars/contracts';
import type {
  AgentConfigSessionSetSourceDisablesResponse,
  AgentConfigSessionSetUserPromptResponse,
  IdentityScope,
  VerifiedIdentity,
} from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { refuseWriteIfErased, requireOwnIdentity, typedMethod } from '@ars/service-kit';
import type { ErasedSessionMarkers } from '@ars/service-kit';
import type { SessionKey, SessionSettingsRepository } from '../store/session-settings.repository.ts';
import { refuseIfRetired } from './agent-state.ts';
import type { AgentLookup } from './agent-state.ts';

/** What the session-user tier's settings need. */
export interface SessionSettingsDeps extends AgentLookup {
  readonly sessionSettings: SessionSettingsRepository;
  /** Sessions `_agent.erase_session` erased: they take no setting again. */
  readonly erased: ErasedSessionMarkers;
}

/**
 * The session-user tier's settings: stored per verified (tenant, user,
 * session), for every agent or for the one `agent_id` names (the agent's
 * own value wins at resolution). Identity-mandatory and claim-free: the body
 * identity may only repeat the verified one (else 401 `identity_required`).
 * A retired agent takes no setting (409 `conflict`). A session the erasure
 * cascade reached takes none either (410 `session_erased`, checked after the
 * write, which is then taken back with the session's other settings; see
 * `ErasedSessionMarkers`).
 */
export function createSessionSettingsHandlers(deps: SessionSettingsDeps): Record<string, RpcHandler> {
  async function keyOf(
    method: string,
    identity: VerifiedIdentity,
    request: { identity?: IdentityScope; agent_id?: string | undefined },
  ): Promise<SessionKey> {
    requireOwnIdentity(method, identity, request.identity);
    if (request.agent_id !== undefined) await refuseIfRetired(deps, identity.tenant, request.agent_id, method);
    return { tenant: identity.tenant, user: identity.user, session: identity.session, agent_id: request.agent_id };
  }

  async function refuseIfErased(method: string, key: SessionKey): Promise<void> {
    const triple = { tenant: key.tenant, user: key.user, session: key.session };
    await refuseWriteIfErased(deps.erased, triple, method, () => deps.sessionSettings.deleteSession(triple));
  }

  return {
    /** `agent_config.session.set_user_prompt`: the session's user prompt layer; `''` clears it. */
    'agent_config.session.set_user_prompt': typedMethod(
      AgentConfigSessionSetUserPromptRequest,
      async ({ method, identity, body: request }) => {
        const key = await keyOf(method, identity, request);
        const stored = await deps.sessionSettings.setUserPrompt(key, request.prompt);
        await refuseIfErased(method, key);
        const response: AgentConfigSessionSetUserPromptResponse = {
          session_id: stored.session,
          ...(stored.agent_id === undefined ? {} : { agent_id: stored.agent_id }),
          prompt: stored.user_prompt ?? '',
          updated_at: stored.updated_at,
        };
        return response;
      },
    ),
    /** `agent_config.session.set_source_disables`: the tool sources disabled in the session; `[]` re-enables all. */
    'agent_config.session.set_source_disables': typedMethod(
      AgentConfigSessionSetSourceDisablesRequest,
      async ({ method, identity, body: request }) => {
        const sources = [...new Set(request.sources)];
        const key = await keyOf(method, identity, request);
        const stored = await deps.sessionSettings.setSourceDisables(key, sources);
        await refuseIfErased(method, key);
        const response: AgentConfigSessionSetSourceDisablesResponse = {
          session_id: stored.session,
          ...(stored.agent_id === undefined ? {} : { agent_id: stored.agent_id }),
          sources: stored.source_disables ?? [],
          updated_at: stored.updated_at,
        };
        return response;
      },
    ),
  };
}
