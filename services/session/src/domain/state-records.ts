import { eventFilterSubject } from '@ars/bus';
import type { StateRecord, StateRecordKind, TaskStatus } from '@ars/contracts';
import { TASK_STATUSES } from '@ars/contracts';
import type { SessionTriple } from './session.ts';

/** The EVENTS subject filter of the state-record consumer: every task event (one filter subject, as 2.9 needs). */
export const TASK_EVENTS_FILTER = eventFilterSubject({ type: 'task.>' });

/** The status each recorded task event moves its task to. Other task.* events are not state records. */
export const TASK_TRANSITIONS: Readonly<Record<string, TaskStatus>> = Object.freeze({
  'task.spawned': 'pending',
  'task.started': 'running',
  'task.completed': 'complete',
  'task.failed': 'failed',
  'task.cancelled': 'cancelled',
  'task.paused': 'paused',
  'task.resumed': 'running',
});

/** A task state transition read from one event. */
export interface TaskTransition {
  readonly taskId: string;
  readonly status: TaskStatus;
  /** From the event itself (`task.started` carries `PriorState`). */
  readonly priorStatus?: TaskStatus;
  /** `task.spawned` of a top-level task: a user turn of the session. */
  readonly isTurn: boolean;
}

function isTaskStatus(value: unknown): value is TaskStatus {
  return typeof value === 'string' && (TASK_STATUSES as readonly string[]).includes(value);
}

/** The transition an event records, or `undefined` for a task event that is not one (or malformed). */
export function transitionOf(type: string, payload: Readonly<Record<string, unknown>>): TaskTransition | undefined {
  const status = TASK_TRANSITIONS[type];
  const taskId = payload.TaskID;
  if (status === undefined || typeof taskId !== 'string' || taskId === '') return undefined;
  const prior = type === 'task.started' && isTaskStatus(payload.PriorState) ? payload.PriorState : undefined;
  const parent = payload.ParentTaskID;
  const isTurn = type === 'task.spawned' && (parent === undefined || parent === '');
  return { taskId, status, ...(prior === undefined ? {} : { priorStatus: prior }), isTurn };
}

/**
 * The position of a state record in its session's history, derived from the
 * EVENTS stream sequence of the event it came from: `2 × sequence` for a
 * turn, `2 × sequence + 1` for a task state record. Strictly increasing in
 * stream order, stable across redelivery (so inserts are idempotent and
 * ordered however the consumer is scheduled), not contiguous.
 */
export function recordSeq(streamSequence: number, kind: StateRecordKind): number {
  return streamSequence * 2 + (kind === 'turn' ? 0 : 1);
}

/** The `_id` of a state record: the event's stream sequence and the record's kind. */
export function recordId(streamSequence: number, kind: StateRecordKind): string {
  return `${streamSequence}:${kind}`;
}

/** A stored state record: the wire record plus its owner triple and source event. */
export interface StateRecordDoc {
  _id: string;
  tenant: string;
  user: string;
  session_id: string;
  seq: number;
  /** EVENTS stream sequence of the event this record came from. */
  event_sequence: number;
  kind: StateRecordKind;
  task_id?: string;
  status?: TaskStatus;
  prior_status?: TaskStatus;
  role?: string;
  content?: string;
  occurred_at: string;
}

/** The inputs of one state record. */
export interface StateRecordInput {
  readonly triple: SessionTriple;
  readonly streamSequence: number;
  readonly occurredAt: string;
  readonly taskId: string;
}

/** The task state record of a transition. */
export function taskStateRecord(input: StateRecordInput, status: TaskStatus, prior?: TaskStatus): StateRecordDoc {
  return {
    ...base(input, 'task_state'),
    status,
    ...(prior === undefined ? {} : { prior_status: prior }),
  };
}

/** The user turn of a spawned top-level task; `content` is its query when it could be read. */
export function turnRecord(input: StateRecordInput, content: string | undefined): StateRecordDoc {
  return { ...base(input, 'turn'), role: 'user', ...(content === undefined ? {} : { content }) };
}

function base(input: StateRecordInput, kind: StateRecordKind): StateRecordDoc {
  return {
    _id: recordId(input.streamSequence, kind),
    tenant: input.triple.tenant,
    user: input.triple.user,
    session_id: input.triple.session,
    seq: recordSeq(input.streamSequence, kind),
    event_sequence: input.streamSequence,
    kind,
    task_id: input.taskId,
    occurred_at: input.occurredAt,
  };
}

/** The wire record (plus `event_sequence`, an extra member clients may ignore). */
export function toStateRecordView(doc: StateRecordDoc): StateRecord {
  const { _id, tenant: _t, user: _u, session_id: _s, ...view } = doc;
  return view;
}
