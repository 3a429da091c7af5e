import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Store } from '@ars/store';
import type { AgentCommand, AgentControlResponse } from '@ars/contracts';

/**
 * One fleet command, the audit trail of fleet control and its idempotency
 * record: `_id` is the tenant and the command id, so that the first call of
 * an id claims it (a unique insert) and every repeat reads its response.
 */
export interface CommandRecord {
  _id: string;
  tenant: string;
  command_id: string;
  agent_id: string;
  command: AgentCommand;
  reason: string;
  force: boolean;
  /** Who issued it (the verified caller). */
  issued_by: { user: string; session: string };
  issued_at: string;
  /** Absent while the first call is applying it. */
  response?: AgentControlResponse;
}

/** The claim of a command id: this call applies it (`claimed`), or it was issued before (`existing`). */
export type CommandClaim = { readonly claimed: true } | { readonly claimed: false; readonly existing: CommandRecord };

export interface CommandRepository {
  /** Claims `record.command_id` in its tenant. */
  claim(record: CommandRecord): Promise<CommandClaim>;
  /** Records the response of a claimed command. */
  complete(tenant: string, commandId: string, response: AgentControlResponse): Promise<void>;
  /** Gives a claimed command up (it was refused): the id may be used again. */
  release(tenant: string, commandId: string): Promise<void>;
  get(tenant: string, commandId: string): Promise<CommandRecord | null>;
}

export const FLEET_COMMANDS_COLLECTION = 'fleet_commands';

const idOf = (tenant: string, commandId: string) => JSON.stringify([tenant, commandId]);

/** The store-backed {@link CommandRepository}; creates its index. */
export async function createCommandRepository(store: Store): Promise<CommandRepository> {
  const commands: Collection<CommandRecord> = store.collection<CommandRecord>(FLEET_COMMANDS_COLLECTION);
  await commands.createIndex({ tenant: 1, agent_id: 1, issued_at: -1 });
  return {
    async claim(record) {
      try {
        await commands.insertOne(record);
        return { claimed: true };
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        const existing = await commands.findOne({ _id: record._id });
        if (existing === null) throw error;
        return { claimed: false, existing };
      }
    },
    async complete(tenant, commandId, response) {
      await commands.updateOne({ _id: idOf(tenant, commandId) }, { $set: { response } });
    },
    async release(tenant, commandId) {
      await commands.deleteOne({ _id: idOf(tenant, commandId), response: { $exists: false } });
    },
    get: (tenant, commandId) => commands.findOne({ _id: idOf(tenant, commandId) }),
  };
}

/** The `_id` of a command record. */
export const commandRecordId = idOf;
