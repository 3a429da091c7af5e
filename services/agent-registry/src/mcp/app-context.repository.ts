import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Store } from '@ars/store';

/**
 * The context of each app tool call a run made (`mcp.app_available`), kept
 * for `mcp.apps.tool_context` and `mcp.apps.call_tool` until it expires.
 * `_id` is the JSON of [tenant, server id, tool call id]; the caller's user
 * is checked by the handlers, not the key.
 */
export interface AppContextRecord {
  _id: string;
  tenant: string;
  user: string;
  session: string;
  /** The run (task id) that made the call. */
  run: string;
  agent_id: string;
  server_id: string;
  /** The tool's own name on its server. */
  tool: string;
  /** The run's `call_id` of the call: the app's `tool_call_id`. */
  tool_call_id: string;
  arguments: Record<string, unknown>;
  result: {
    content: Record<string, unknown>[];
    structured_content?: Record<string, unknown>;
    is_error: boolean;
  };
  resource_uri: string;
  display_mode: string;
  /** ISO 8601 UTC. */
  created_at: string;
  /** ISO 8601 UTC; past it the context is gone (pruned, and never answered). */
  expires_at: string;
}

export interface AppContextRepository {
  /** Records (or replaces) a call's context. */
  put(record: Omit<AppContextRecord, '_id'>): Promise<void>;
  /** The unexpired context of the call, whoever's it is. */
  get(tenant: string, serverId: string, toolCallId: string, now?: Date): Promise<AppContextRecord | null>;
  /** Deletes the contexts expired before `now`; answers how many. */
  prune(now?: Date): Promise<number>;
}

/** Contexts deleted per store operation by a prune. */
export const APP_CONTEXT_PRUNE_BATCH = 250;

const idOf = (tenant: string, serverId: string, toolCallId: string) => JSON.stringify([tenant, serverId, toolCallId]);

/** The store-backed {@link AppContextRepository}; creates its index. */
export async function createAppContextRepository(store: Store): Promise<AppContextRepository> {
  const contexts: Collection<AppContextRecord> = store.collection<AppContextRecord>('mcp_app_contexts');
  await contexts.createIndex({ expires_at: 1 });

  return {
    async put(record) {
      const _id = idOf(record.tenant, record.server_id, record.tool_call_id);
      const { tenant: _tenant, ...rest } = record;
      const write = () =>
        contexts.updateOne({ _id }, { $set: rest, $setOnInsert: { tenant: record.tenant } }, { upsert: true });
      try {
        await write();
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        await write();
      }
    },
    async get(tenant, serverId, toolCallId, now = new Date()) {
      const found = await contexts.findOne({ _id: idOf(tenant, serverId, toolCallId) });
      return found !== null && found.expires_at > now.toISOString() ? found : null;
    },
    async prune(now = new Date()) {
      const cutoff = now.toISOString();
      let deleted = 0;
      for (;;) {
        const expired = await contexts.find(
          { expires_at: { $lte: cutoff } },
          { sort: { expires_at: 1 }, limit: APP_CONTEXT_PRUNE_BATCH, projection: { _id: 1 } },
        );
        if (expired.length === 0) return deleted;
        deleted += (await contexts.deleteMany({ _id: { $in: expired.map((c) => c._id) } })).deletedCount;
        if (expired.length < APP_CONTEXT_PRUNE_BATCH) return deleted;
      }
    },
  };
}
