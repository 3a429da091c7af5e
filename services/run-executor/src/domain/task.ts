import { TERMINAL_TASK_STATUSES } from '@ars/contracts';
import type { InputArtifact, Task, TaskStatus } from '@ars/contracts';

/**
 * The run-executor's task model, shared by the API side (start, controls,
 * reads) and the engine. One record per task, `_id` = `task_id`; instants are
 * ISO 8601 UTC strings. The wire shape (`Task` of @ars/contracts) is
 * {@link toTaskView} of it.
 *
 * Status moves: `pending` → `running` → `complete` | `failed` | `cancelled`.
 * A parked run stays `running`; `paused` is never written by the live path.
 */

/** The kind of every task `start` creates: a turn of the session. */
export const FOREGROUND_KIND = 'foreground';
/** A task that is not a turn of its session: its completion is acknowledged once a later turn takes it up. */
export const BACKGROUND_KIND = 'background';

/** The currency of `cost_usd` and of the wire cost rollup. */
export const COST_CURRENCY = 'USD';

/** One planner step's cost, recorded by the engine through `recordStep`. */
export interface StepRecord {
  /** 1-based planner step index; recording the same index twice keeps the first. */
  index: number;
  /** Cost of the step's LLM calls in US dollars. */
  cost_usd: number;
  tokens_in: number;
  tokens_out: number;
  /** The tool the step called, when it called one. */
  tool?: string;
  /** The model the step called, when known. */
  model?: string;
  recorded_at: string;
}

/** An input artifact as recorded at start: the id, the hint, and what the artifact service said of it. */
export interface InputArtifactRecord {
  artifact_id: string;
  /** The disposition hint given at start; absent when none. */
  disposition?: string;
  mime_type?: string;
  size_bytes?: number;
}

/**
 * Operator context or a user message appended for the planner's next step.
 * Its payload is read with {@link contextPayload}, whichever shape stored it.
 */
export interface ContextEntry {
  kind: 'inject_context' | 'user_message';
  /**
   * The control's payload (the context object, or `{ message }`) as its JSON
   * text. The document store refuses a field name that starts with `$`,
   * holds a dot or is empty, and any of them may be a key of an injected
   * object; as text, every object the edge accepted is stored as sent.
   */
  payload_json?: string;
  /** The payload itself: entries written before `payload_json`. */
  payload?: unknown;
  /** The control's event id (idempotency). */
  event_id: string;
  at: string;
}

/** A control's payload as a context entry to store (its JSON text, see {@link ContextEntry}). */
export function contextEntry(kind: ContextEntry['kind'], payload: unknown, eventId: string): Omit<ContextEntry, 'at'> {
  return { kind, payload_json: JSON.stringify(payload), event_id: eventId };
}

/** The payload of a context entry, from its JSON text or, in an entry of the earlier shape, as stored. */
export function contextPayload(entry: Pick<ContextEntry, 'payload_json' | 'payload'>): unknown {
  return entry.payload_json === undefined ? entry.payload : (JSON.parse(entry.payload_json) as unknown);
}

/** The stored task. */
export interface TaskRecord {
  _id: string;
  task_id: string;
  tenant: string;
  user: string;
  session: string;
  kind: string;
  status: TaskStatus;
  /** The query given at start. */
  query: string;
  /** The current goal: the query until a redirect rewrites it. */
  goal: string;
  priority: number;
  parent_task_id?: string;
  /** The task group this task is a member of (a child a `spawn_group` call spawned). */
  group_id?: string;
  /** Present only when the caller named an agent (absent: the default agent). */
  agent_id?: string;
  /** The agent revision resolved at start, when one was. */
  agent_revision_id?: string;
  idempotency_key?: string;
  /**
   * `JSON.stringify([tenant, user, session, idempotency_key])`, present only
   * with a key. A sparse unique index on it makes idempotent starts race-free.
   */
  idempotency_scope?: string;
  input_artifacts: InputArtifactRecord[];
  background_acknowledged: boolean;
  error_code?: string;
  error_message?: string;
  created_at: string;
  updated_at: string;
  started_at?: string;
  ended_at?: string;
  steps: StepRecord[];
  /** Sum of `steps[].cost_usd`. */
  cost_usd: number;
  /** Context and user messages for the planner, oldest first. */
  context: ContextEntry[];
  /** EVENTS sequence of this task's `task.spawned`, once published. */
  spawned_sequence?: number;
  /**
   * Present only while the task is `pending`: when its run was last put on
   * the RUNS queue. A sparse index on it lists the queued tasks alone, which
   * is how the stale-run sweeper finds a run the queue lost.
   */
  queued_at?: string;
  /** How many times the stale-run sweeper queued the run again. */
  requeues?: number;
}

/** True for `complete`, `failed` and `cancelled`: the task never changes again. */
export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_TASK_STATUSES.includes(status);
}

function inputArtifactView(record: InputArtifactRecord): InputArtifact {
  return { ...record };
}

/** The wire `Task` of a stored record (internal members left out). */
export function toTaskView(task: TaskRecord): Task {
  const optional = <K extends keyof TaskRecord>(key: K) => (task[key] === undefined ? {} : { [key]: task[key] });
  return {
    task_id: task.task_id,
    status: task.status,
    kind: task.kind,
    tenant: task.tenant,
    user: task.user,
    session: task.session,
    query: task.query,
    goal: task.goal,
    priority: task.priority,
    ...optional('parent_task_id'),
    ...optional('agent_id'),
    ...optional('idempotency_key'),
    input_artifacts: task.input_artifacts.map(inputArtifactView),
    background_acknowledged: task.background_acknowledged,
    created_at: task.created_at,
    updated_at: task.updated_at,
    ...optional('started_at'),
    ...optional('ended_at'),
    ...optional('error_code'),
    ...optional('error_message'),
  };
}
