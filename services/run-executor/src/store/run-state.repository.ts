import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Store } from '@ars/store';
import type { RunOverridesView } from '@ars/contracts';
import type { PauseRecord } from '../domain/pause.ts';
import type { ChatMessage } from '../providers/provider.ts';
import { PAUSES_COLLECTION } from './task.repository.ts';
import { sessionKey } from '../domain/session-key.ts';

/**
 * The engine's durable state, next to the task rows: one checkpoint per live
 * run (written once per planner step, deleted once the terminal event is
 * out), pause records (collection `pauses` of the task repository, which
 * `pause.list` reads; the engine creates and resolves them, resolution
 * atomic), control receipts (`event_id` deduplication) and each session's
 * recent turns (the prompt's conversation history).
 */

/** The owner triple every record carries. */
export interface Owner {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/** A tool call whose outcome is recorded: never executed again. */
export interface CompletedCall {
  call_id: string;
  tool: string;
  step: number;
  ok: boolean;
  output: string;
  attempts: number;
}

/** An unsafe tool call that started; if a checkpoint still names it after a crash, its outcome is unknown. */
export interface PendingCall {
  call_id: string;
  tool: string;
  /** The tool's `tool.*` Transport (absent on checkpoints written before MCP tools: `builtin`). */
  transport?: string;
  step: number;
  started_at: string;
}

/** How a run ended, kept until its terminal event is out. */
export interface TerminalOutcome {
  status: 'complete' | 'failed' | 'cancelled';
  error_code?: string;
  reason?: string;
  cascaded?: boolean;
  notify_on_complete?: boolean;
}

/** A cancellation addressed to a run that had no live inbox yet (a cascading parent's). */
export interface CancelMarker {
  reason: string;
  cascaded: boolean;
}

/** The checkpoint of one run. */
export interface RunStateRecord extends Owner {
  _id: string;
  task_id: string;
  /** Planner steps completed. */
  step: number;
  messages: ChatMessage[];
  completed_calls: CompletedCall[];
  pending_call?: PendingCall | null;
  /** How many entries of the task's `context` (inject_context, user_message) are already in `messages`. */
  inputs_consumed: number;
  cost_usd: number;
  /** The planner's repairs of invalid tool calls (absent: none yet). */
  repairs?: RepairCounter;
  /** The session's run overrides as the run last saw them, and the members it took mid-run (`run-patches.ts`). */
  live_overrides?: LiveOverrides;
  terminal?: TerminalOutcome;
  answer?: string;
  cancel?: CancelMarker;
  /** `traceparent` of the last attempt's `run` span that recorded: a redelivered run's span links to it. */
  attempt_trace?: string;
  created_at: string;
  updated_at: string;
}

/** A run's view of its session's run overrides: mid-run patches (`run-patches.ts`). */
export interface LiveOverrides {
  /** `updated_at` of the overrides last seen (`''`: none). */
  at: string;
  seen: RunOverridesView;
  /** The members patched into the run, over what it resolved at its first claim. */
  applied: RunOverridesView;
}

/** Invalid tool calls fed back to the model: consecutive ones (reset by a valid call) and the run's total. */
export interface RepairCounter {
  consecutive: number;
  total: number;
  /** The validation errors of the consecutive ones, oldest first. */
  reasons: string[];
}

/** The part of a checkpoint one planner step rewrites. */
export type Checkpoint = Pick<
  RunStateRecord,
  | 'step'
  | 'messages'
  | 'completed_calls'
  | 'pending_call'
  | 'inputs_consumed'
  | 'cost_usd'
  | 'repairs'
  | 'live_overrides'
  | 'attempt_trace'
>;

interface ControlReceipt extends Owner {
  _id: string;
  task_id: string;
  at: string;
}

/** One earlier turn of a session: its query and final answer. */
export interface SessionTurn {
  task_id: string;
  query: string;
  answer: string;
  at: string;
  /** The turn is a background task's completion (acknowledged once a later run takes it up). */
  background?: boolean;
}

interface SessionTurnsRecord {
  _id: string;
  turns: SessionTurn[];
  /** Bumped by every append (absent on records written before it existed). */
  version?: number;
}

/** Appends that lost the race to another run of the session before one gives up. */
const TURN_APPEND_ATTEMPTS = 50;

/** Turns kept per session for the prompt. */
export const SESSION_TURNS_KEPT = 10;

export const RUN_STATE_COLLECTIONS = {
  runStates: 'run_states',
  pauses: PAUSES_COLLECTION,
  controlReceipts: 'control_receipts',
  sessionTurns: 'session_turns',
} as const;

/** Filter and update of an upsert that fills in the identity and defaults when it inserts. */
/**
 * A message as stored: a tool call's arguments as their JSON text. They are
 * what the model wrote, and a document store refuses field names that are
 * empty, start with `$` or hold a dot (`{"a.b": 1}` is valid JSON arguments);
 * stored as objects, such a call failed every checkpoint and the run retried
 * its step for ever. Checkpoints written before keep `args` and still load.
 */
type StoredMessage = Omit<ChatMessage, 'tool_call'> & {
  tool_call?: { id: string; name: string; args_json?: string; args?: Record<string, unknown> };
};

function toStoredMessages(messages: readonly ChatMessage[]): StoredMessage[] {
  return messages.map((message) => {
    if (message.tool_call === undefined) return message;
    const { args, ...call } = message.tool_call;
    return { ...message, tool_call: { ...call, args_json: JSON.stringify(args) } };
  });
}

function fromStoredMessages(messages: readonly StoredMessage[]): ChatMessage[] {
  return messages.map((message) => {
    if (message.tool_call === undefined) return message as ChatMessage;
    const { args_json: json, args, ...call } = message.tool_call;
    const parsed = json === undefined ? (args ?? {}) : (JSON.parse(json) as Record<string, unknown>);
    return { ...message, tool_call: { ...call, args: parsed } };
  });
}

/** A checkpoint's fields as stored (see {@link StoredMessage}). */
function storedFields<T extends { messages?: ChatMessage[] }>(
  fields: T,
): Omit<T, 'messages'> & {
  messages?: StoredMessage[];
} {
  return fields.messages === undefined ? fields : { ...fields, messages: toStoredMessages(fields.messages) };
}

function upsertOf(
  taskId: string,
  owner: Owner,
  fields: Partial<RunStateRecord>,
): [{ _id: string }, { $set: Partial<RunStateRecord>; $setOnInsert: Partial<RunStateRecord> }] {
  const insert: Partial<RunStateRecord> = {
    task_id: taskId,
    tenant: owner.tenant,
    user: owner.user,
    session: owner.session,
    created_at: new Date().toISOString(),
  };
  for (const [key, value] of Object.entries(RUN_STATE_DEFAULTS) as [keyof RunStateRecord, unknown][]) {
    if (!(key in fields)) (insert as Record<string, unknown>)[key] = value;
  }
  return [{ _id: taskId }, { $set: fields, $setOnInsert: insert }];
}

/** Members of a fresh checkpoint. */
export const RUN_STATE_DEFAULTS: Readonly<Checkpoint> = Object.freeze({
  step: 0,
  messages: [],
  completed_calls: [],
  pending_call: null,
  inputs_consumed: 0,
  cost_usd: 0,
});

export interface RunStateRepository {
  init(): Promise<void>;
  load(taskId: string): Promise<RunStateRecord | null>;
  /** The one write of a planner step (creates the record on the run's first step). */
  checkpoint(taskId: string, owner: Owner, checkpoint: Checkpoint): Promise<void>;
  /** Records how the run ended (with the final step's checkpoint), before the task row is marked. */
  finish(
    taskId: string,
    owner: Owner,
    terminal: TerminalOutcome,
    checkpoint?: Checkpoint,
    answer?: string,
  ): Promise<void>;
  /** Drops the checkpoint once the terminal event is out. */
  remove(taskId: string): Promise<void>;
  markCancel(taskId: string, owner: Owner, marker: CancelMarker): Promise<void>;

  createPause(record: PauseRecord): Promise<void>;
  /** Resolves an open pause of the run once; null when it was already resolved (or is not the run's). */
  resolvePause(token: string, taskId: string, decision: string, at: string): Promise<PauseRecord | null>;
  /**
   * Points an open `auth` pause at a new authorization flow (a redelivered
   * run's fresh `_oauth.begin`, same token); null when it was resolved meanwhile.
   */
  renewAuthPause(
    token: string,
    taskId: string,
    flow: Required<Pick<PauseRecord, 'auth_state' | 'authorize_url' | 'expires_at'>>,
  ): Promise<PauseRecord | null>;
  /** Resolves every open pause of a run that ended; returns how many. */
  resolveAllPauses(taskId: string, decision: string, at: string): Promise<number>;
  openPauses(taskId: string): Promise<PauseRecord[]>;

  /** True the first time `eventId` is seen for `taskId`. */
  recordControl(taskId: string, owner: Owner, eventId: string): Promise<boolean>;

  sessionTurns(owner: Owner): Promise<SessionTurn[]>;
  appendSessionTurn(owner: Owner, turn: SessionTurn): Promise<void>;

  /** Erasure cascade: deletes every record of the session; returns how many. */
  eraseSession(owner: Owner): Promise<number>;
}

/** The store-backed repository. */
export function createRunStateRepository(store: Store): RunStateRepository {
  const states: Collection<RunStateRecord> = store.collection(RUN_STATE_COLLECTIONS.runStates);
  const pauses: Collection<PauseRecord> = store.collection(RUN_STATE_COLLECTIONS.pauses);
  const receipts: Collection<ControlReceipt> = store.collection(RUN_STATE_COLLECTIONS.controlReceipts);
  const turns: Collection<SessionTurnsRecord> = store.collection(RUN_STATE_COLLECTIONS.sessionTurns);
  const now = (): string => new Date().toISOString();

  return {
    async init(): Promise<void> {
      // No secondary index on checkpoints: every checkpoint write would pay for it, and only erasure scans them.
      await receipts.createIndex({ tenant: 1, user: 1, session: 1 });
    },

    async load(taskId): Promise<RunStateRecord | null> {
      const found = await states.findOne({ _id: taskId });
      if (found === null) return null;
      return { ...found, messages: fromStoredMessages(found.messages as StoredMessage[]) };
    },

    async checkpoint(taskId, owner, checkpoint): Promise<void> {
      const fields = storedFields({ ...checkpoint, updated_at: now() }) as Partial<RunStateRecord>;
      await states.updateOne(...upsertOf(taskId, owner, fields), { upsert: true });
    },

    async finish(taskId, owner, terminal, checkpoint, answer): Promise<void> {
      const fields = { ...checkpoint, terminal, ...(answer === undefined ? {} : { answer }), updated_at: now() };
      await states.updateOne(...upsertOf(taskId, owner, storedFields(fields) as Partial<RunStateRecord>), {
        upsert: true,
      });
    },

    async remove(taskId): Promise<void> {
      await states.deleteOne({ _id: taskId });
    },

    async markCancel(taskId, owner, marker): Promise<void> {
      await states.updateOne(...upsertOf(taskId, owner, { cancel: marker, updated_at: now() }), { upsert: true });
    },

    async createPause(record): Promise<void> {
      await pauses.insertOne(record);
    },

    resolvePause: (token, taskId, decision, at) =>
      pauses.findOneAndUpdate(
        { _id: token, task_id: taskId, resolved_at: { $exists: false } },
        { $set: { resolved_at: at, decision } },
        { returnDocument: 'after' },
      ),

    renewAuthPause: (token, taskId, flow) =>
      pauses.findOneAndUpdate(
        { _id: token, task_id: taskId, kind: 'auth', resolved_at: { $exists: false } },
        { $set: flow },
        { returnDocument: 'after' },
      ),

    resolveAllPauses: async (taskId, decision, at) =>
      (
        await pauses.updateMany(
          { task_id: taskId, resolved_at: { $exists: false } },
          { $set: { resolved_at: at, decision } },
        )
      ).modifiedCount,

    openPauses: (taskId) =>
      pauses.find({ task_id: taskId, resolved_at: { $exists: false } }, { sort: { requested_at: 1 } }),

    async recordControl(taskId, owner, eventId): Promise<boolean> {
      try {
        await receipts.insertOne({
          _id: JSON.stringify([taskId, eventId]),
          task_id: taskId,
          tenant: owner.tenant,
          user: owner.user,
          session: owner.session,
          at: now(),
        });
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    },

    async sessionTurns(owner): Promise<SessionTurn[]> {
      return (await turns.findOne({ _id: sessionKey(owner) }))?.turns ?? [];
    },

    async appendSessionTurn(owner, turn): Promise<void> {
      // Compare-and-set on `version`: runs of one session end at the same
      // time (a task group's members), and a plain read-modify-write would
      // drop one of their turns. A replayed turn replaces its earlier copy.
      const key = sessionKey(owner);
      for (let attempt = 0; attempt < TURN_APPEND_ATTEMPTS; attempt += 1) {
        const current = await turns.findOne({ _id: key });
        const next = [...(current?.turns ?? []).filter((t) => t.task_id !== turn.task_id), turn].slice(
          -SESSION_TURNS_KEPT,
        );
        if (current === null) {
          try {
            await turns.insertOne({ _id: key, turns: next, version: 1 });
            return;
          } catch (error) {
            if (!isDuplicateKeyError(error)) throw error;
            continue;
          }
        }
        const version = current.version ?? 0;
        const { matchedCount } = await turns.updateOne(
          { _id: key, version: current.version === undefined ? { $exists: false } : version },
          { $set: { turns: next, version: version + 1 } },
        );
        if (matchedCount === 1) return;
      }
      throw new Error(`the turns of session ${key} changed ${TURN_APPEND_ATTEMPTS} times during one append`);
    },

    async eraseSession(owner): Promise<number> {
      const filter = { tenant: owner.tenant, user: owner.user, session: owner.session };
      const results = await Promise.all([
        states.deleteMany(filter),
        pauses.deleteMany(filter),
        receipts.deleteMany(filter),
        turns.deleteOne({ _id: sessionKey(owner) }),
      ]);
      return results.reduce((sum, r) => sum + r.deletedCount, 0);
    },
  };
}
