import { AGENT_ERASE_SESSION, ServiceError } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { ErasedSessionMarkers, InternalHandler } from '@ars/service-kit';
import type { SessionSettingsRepository } from '../store/session-settings.repository.ts';
import type { SkillRepository } from '../store/skill.repository.ts';

/** What the erasure of a session's tier needs. */
export interface EraseSessionDeps {
  readonly skills: SkillRepository;
  readonly sessionSettings: SessionSettingsRepository;
  readonly erased: ErasedSessionMarkers;
}

/**
 * `_agent.erase_session {tenant, user, session}` → `{skills_deleted,
 * settings_deleted}`: part of the erasure cascade of sessions.delete. Marks
 * the session erased first (a session-tier write that lands after the
 * deletes sees the marker and takes itself back), then deletes the session's
 * skills and settings. Idempotent. The caller is the session service acting
 * for the verified owner, so the triple must be the caller's.
 */
export function createEraseSessionHandler(deps: EraseSessionDeps): InternalHandler {
  return serveInternal(AGENT_ERASE_SESSION, async ({ identity, body: triple }) => {
    if (triple.tenant !== identity.tenant || triple.user !== identity.user || triple.session !== identity.session) {
      throw new ServiceError(
        'identity_required',
        `${AGENT_ERASE_SESSION.name}: only the caller's own session can be erased`,
      );
    }
    await deps.erased.mark(triple, new Date().toISOString());
    const skillsDeleted = await deps.skills.deleteSession(triple);
    const settingsDeleted = await deps.sessionSettings.deleteSession(triple);
    return { skills_deleted: skillsDeleted, settings_deleted: settingsDeleted };
  });
}
