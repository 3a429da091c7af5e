import type { Collection, Store } from '@ars/store';

/**
 * The session-user tier's settings of one (tenant, user, session), for every
 * agent (`agent_id` absent) or for one agent. `_id` is the JSON of the four.
 */
export interface SessionSettingsRecord {
  _id: string;
  tenant: string;
  user: string;
  session: string;
  agent_id?: string;
  /** Absent: no user prompt (an empty prompt clears it). */
  user_prompt?: string;
  /** Absent: never set; `[]`: every source enabled. */
  source_disables?: string[];
  /** ISO 8601 UTC. */
  updated_at: string;
}

/** Whose settings: the verified session, for every agent or one. */
export interface SessionKey {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly agent_id?: string | undefined;
}

/** The settings that apply to a run of `agent_id` in a session: the agent's own member wins, else the all-agents one. */
export interface MergedSessionSettings {
  readonly user_prompt?: string | undefined;
  readonly source_disables?: string[] | undefined;
}

/** Session settings by session and agent. */
export interface SessionSettingsRepository {
  /** Sets the user prompt; `''` removes it. Answers the record as stored. */
  setUserPrompt(key: SessionKey, prompt: string): Promise<SessionSettingsRecord>;
  setSourceDisables(key: SessionKey, sources: readonly string[]): Promise<SessionSettingsRecord>;
  /** What applies to a run of `agent_id` in the session. */
  merged(key: SessionKey & { readonly agent_id: string }): Promise<MergedSessionSettings>;
  countAgent(tenant: string, agentId: string): Promise<number>;
  /** Deletes every session's settings naming the agent; answers how many records. */
  deleteAgent(tenant: string, agentId: string): Promise<number>;
  /** Deletes the settings of one session, for every agent; answers how many records. */
  deleteSession(triple: { tenant: string; user: string; session: string }): Promise<number>;
}

const idOf = (key: SessionKey) => JSON.stringify([key.tenant, key.user, key.session, key.agent_id ?? '']);

export const SESSION_SETTINGS_COLLECTION = 'agent_config_session_settings';

/** The store-backed {@link SessionSettingsRepository}; creates its index. */
export async function createSessionSettingsRepository(store: Store): Promise<SessionSettingsRepository> {
  const settings: Collection<SessionSettingsRecord> = store.collection<SessionSettingsRecord>(
    SESSION_SETTINGS_COLLECTION,
    { cacheReads: true },
  );
  await settings.createIndex({ tenant: 1, agent_id: 1 });

  const identityOf = (key: SessionKey) => ({
    tenant: key.tenant,
    user: key.user,
    session: key.session,
    ...(key.agent_id === undefined ? {} : { agent_id: key.agent_id }),
  });

  async function write(key: SessionKey, update: Parameters<Collection<SessionSettingsRecord>['updateOne']>[1]) {
    const stored = await settings.findOneAndUpdate({ _id: idOf(key) }, update, {
      upsert: true,
      returnDocument: 'after',
    });
    if (stored === null) throw new Error('session settings upsert returned nothing');
    return stored;
  }

  return {
    setUserPrompt: (key, prompt) => {
      const now = new Date().toISOString();
      return prompt === ''
        ? write(key, { $set: { ...identityOf(key), updated_at: now }, $unset: { user_prompt: '' } })
        : write(key, { $set: { ...identityOf(key), user_prompt: prompt, updated_at: now } });
    },
    setSourceDisables: (key, sources) =>
      write(key, {
        $set: { ...identityOf(key), source_disables: [...sources], updated_at: new Date().toISOString() },
      }),
    merged: async (key) => {
      const [general, specific] = await Promise.all([
        settings.findOne({ _id: idOf({ ...key, agent_id: undefined }) }),
        settings.findOne({ _id: idOf(key) }),
      ]);
      return {
        user_prompt: specific?.user_prompt ?? general?.user_prompt,
        source_disables: specific?.source_disables ?? general?.source_disables,
      };
    },
    countAgent: (tenant, agentId) => settings.countDocuments({ tenant, agent_id: agentId }),
    deleteAgent: async (tenant, agentId) => (await settings.deleteMany({ tenant, agent_id: agentId })).deletedCount,
    deleteSession: async ({ tenant, user, session }) =>
      (await settings.deleteMany({ tenant, user, session })).deletedCount,
  };
}
