import { APPROVAL_POLICIES_COLLECTION } from '../tools/approval-policy.repository.ts';
import { RETIREMENTS_COLLECTION } from './retirement.repository.ts';
import { REVISIONS_COLLECTION, USER_REVISIONS_COLLECTION } from './revision.repository.ts';
import { SESSION_SETTINGS_COLLECTION } from './session-settings.repository.ts';
import { SKILLS_COLLECTION } from './skill.repository.ts';

/**
 * The collections `_agent.effective_config` resolves a run's configuration
 * from (with governance's tenant overrides): every write to one is announced
 * on the bus (`createConfigChangeAnnouncer`), so that executors keeping
 * resolved configurations drop them. A new input of the resolution belongs
 * here.
 */
export const CONFIG_INPUT_COLLECTIONS: readonly string[] = [
  REVISIONS_COLLECTION,
  USER_REVISIONS_COLLECTION,
  SESSION_SETTINGS_COLLECTION,
  SKILLS_COLLECTION,
  RETIREMENTS_COLLECTION,
  APPROVAL_POLICIES_COLLECTION,
];
