import type { Store, StoreDocument } from '@ars/store';
import type { EffectiveConfigRecord } from '../engine/agent-config.ts';
import { TASKS_COLLECTION } from './task.repository.ts';

/**
 * The effective configuration a run resolved at its first claim.
 *
 * - On the task row, member `effective_config`: the summary (agent and
 *   revisions, `content_hash`, `layers`, skills, source) — small, because
 *   every later write of the row carries it.
 * - In collection `run_configs`: the resolved configuration itself, once per
 *   (tenant, user, session, content hash) — a session's runs nearly always
 *   share one, so the steady state writes nothing here (this process
 *   remembers what it stored). A redelivered run loads it back and keeps the
 *   configuration it started with; it is erased with the session (it holds the
 *   session's prompt and skills).
 *
 * Kept apart from `TaskRepository` because only the engine writes these,
 * once per run, with one conditional update of the task.
 */

/** What the task row records. */
export type EffectiveConfigSummary = Omit<EffectiveConfigRecord, 'config' | 'source_disables'>;

/** The (tenant, user, session) a configuration was resolved for. */
export interface ConfigOwner {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

export interface TaskConfigRepository {
  /** Records the configuration of a run on its task (unless one is recorded) and stores its body. */
  record(taskId: string, owner: ConfigOwner, config: EffectiveConfigRecord): Promise<void>;
  /** The configuration a task recorded, or null when its body is gone (the run resolves again). */
  load(owner: ConfigOwner, summary: EffectiveConfigSummary): Promise<EffectiveConfigRecord | null>;
  /** Erasure cascade: the session's stored configurations; returns how many. */
  eraseSession(owner: ConfigOwner): Promise<number>;
}

/** The run configurations collection. */
export const RUN_CONFIGS_COLLECTION = 'run_configs';

interface TaskConfigDocument extends StoreDocument {
  effective_config?: EffectiveConfigSummary;
}

interface RunConfigDocument extends StoreDocument, ConfigOwner {
  content_hash: string;
  config: Readonly<Record<string, unknown>>;
  source_disables: readonly string[];
  created_at: string;
}

/** The configuration summary recorded on a task row, if any. */
export function recordedConfigOf(task: object): EffectiveConfigSummary | undefined {
  return (task as TaskConfigDocument).effective_config;
}

/** Bodies this process remembers storing (beyond it, an already stored body costs one no-op upsert). */
const REMEMBERED = 10_000;

function keyOf(owner: ConfigOwner, contentHash: string): string {
  return JSON.stringify([owner.tenant, owner.user, owner.session, contentHash]);
}

/** The store-backed repository. */
export function createTaskConfigRepository(store: Store): TaskConfigRepository {
  const tasks = store.collection<TaskConfigDocument>(TASKS_COLLECTION);
  const bodies = store.collection<RunConfigDocument>(RUN_CONFIGS_COLLECTION);
  const stored = new Set<string>();

  async function storeBody(owner: ConfigOwner, config: EffectiveConfigRecord): Promise<void> {
    const key = keyOf(owner, config.content_hash);
    if (stored.has(key)) return;
    await bodies.updateOne(
      { _id: key },
      {
        $setOnInsert: {
          tenant: owner.tenant,
          user: owner.user,
          session: owner.session,
          content_hash: config.content_hash,
          config: config.config,
          source_disables: config.source_disables,
          created_at: config.resolved_at,
        },
      },
      { upsert: true },
    );
    if (stored.size >= REMEMBERED) stored.clear();
    stored.add(key);
  }

  return {
    async record(taskId, owner, config) {
      const { config: _body, source_disables: _disables, ...summary } = config;
      await Promise.all([
        storeBody(owner, config),
        tasks.updateOne({ _id: taskId, effective_config: { $exists: false } }, { $set: { effective_config: summary } }),
      ]);
    },

    async load(owner, summary) {
      const body = await bodies.findOne({ _id: keyOf(owner, summary.content_hash) });
      return body === null ? null : { ...summary, config: body.config, source_disables: body.source_disables };
    },

    async eraseSession(owner) {
      const prefix = `${JSON.stringify([owner.tenant, owner.user, owner.session]).slice(0, -1)},`;
      for (const key of stored) if (key.startsWith(prefix)) stored.delete(key);
      return (await bodies.deleteMany({ tenant: owner.tenant, user: owner.user, session: owner.session })).deletedCount;
    },
  };
}
