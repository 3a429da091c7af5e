import { z } from 'zod';
import { isServiceError } from '@ars/contracts';
import type { RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { Catalog } from '../catalog/admission.ts';
import type { TurnQueries } from '../catalog/turn-queries.ts';
import { toIsoUtc } from '../domain/session.ts';
import type { SessionDoc, SessionTriple } from '../domain/session.ts';
import { taskStateRecord, transitionOf, turnRecord } from '../domain/state-records.ts';
import type { StateRecordDoc, StateRecordInput } from '../domain/state-records.ts';
import { deriveTitle } from '../domain/title.ts';
import type { SessionEvents } from '../session-events.ts';
import type { ProjectionRepository } from '../store/projection.repository.ts';
import type { SessionRepository } from '../store/session.repository.ts';
import type { StateRecordRepository } from '../store/state-record.repository.ts';
import type { EventHandler } from './durable-consumer.ts';

/** Durable name of the state-record consumer. */
export const STATE_RECORDS_CONSUMER = 'session-state-records';

/** How long reading a task's query from the run-executor may take, in milliseconds. */
const QUERY_TIMEOUT_MS = 5_000;

/** `ErrorClass` of `session.naming_failed` when the first query has no visible text. */
export const EMPTY_QUERY_ERROR_CLASS = 'empty_query';

const TaskQuery = z.looseObject({ task: z.looseObject({ query: z.string() }) });

/** Dependencies of {@link createTaskEventHandler}. */
export interface TaskEventDeps {
  readonly catalog: Catalog;
  readonly sessions: SessionRepository;
  readonly records: StateRecordRepository;
  readonly projections: ProjectionRepository;
  readonly events: SessionEvents;
  readonly rpc: RpcClient;
  readonly logger: Logger;
  /** Queries passed with `_session.admit`; a turn found there is not read back. */
  readonly turns: TurnQueries;
}

type QueryOutcome = { readonly query: string } | { readonly errorClass: string };

/**
 * Records a session's state records from its task events:
 * - every task transition (spawned, started, completed, failed, cancelled,
 *   paused, resumed) becomes a `task_state` record with the prior status;
 * - `task.spawned` of a top-level task is also a `turn` (role `user`); its
 *   text is the task's query (the event does not carry it): the one
 *   `_session.admit` passed for it, else read once from the run-executor's
 *   `tasks.get`; when that read fails the turn is kept without content;
 * - the first turn names the session automatically (`session.title_changed`
 *   Source `auto`, or `session.naming_failed` with the error class);
 * - activity moves `last_seen_at` forward.
 * Records are keyed by stream sequence: a redelivered event inserts nothing
 * twice. The session is read once, after an event's writes (for a spawn,
 * by the write that notes the task on it): an erased one's are undone, so
 * nothing of it stays; a session seen first on the stream is opened. A
 * spawn's total comes from its own count, not a read: a run's three task
 * events cost ten store operations.
 */
export function createTaskEventHandler(deps: TaskEventDeps): EventHandler {
  async function readQuery(triple: SessionTriple, taskId: string): Promise<QueryOutcome> {
    const admitted = deps.turns.take(taskId);
    if (admitted !== undefined) return { query: admitted };
    try {
      const reply = await deps.rpc.call(
        'run-executor',
        'tasks.get',
        { ...triple, scopes: [] },
        { identity: {}, task_id: taskId },
        { timeoutMs: QUERY_TIMEOUT_MS },
      );
      const parsed = TaskQuery.safeParse(reply);
      return parsed.success ? { query: parsed.data.task.query } : { errorClass: 'malformed_reply' };
    } catch (error) {
      return { errorClass: isServiceError(error) ? error.code : 'internal' };
    }
  }

  async function nameSession(triple: SessionTriple, outcome: QueryOutcome, seen: SessionDoc): Promise<void> {
    // Named, or its one attempt taken, when the entry was read: the claim would match nothing.
    if (seen.title !== undefined || seen.naming !== undefined) return;
    if (!(await deps.sessions.claimNaming(triple))) return;
    const title = 'query' in outcome ? deriveTitle(outcome.query) : undefined;
    const named = await deps.sessions.finishNaming(triple, title);
    if (named) {
      await deps.events.titleChanged(triple, 'auto');
      return;
    }
    if (title === undefined) {
      const errorClass = 'errorClass' in outcome ? outcome.errorClass : EMPTY_QUERY_ERROR_CLASS;
      await deps.events.namingFailed(triple, errorClass);
    }
  }

  /**
   * The session after this event's writes, read once: undefined when it is
   * erased, and then this event's writes are undone (an erasure that started
   * before them, or meanwhile, may have deleted before they were made); a
   * session seen first on the stream is opened.
   */
  async function sessionAfter(triple: SessionTriple, written: readonly StateRecordDoc[]) {
    const session = await deps.catalog.ensure(triple);
    if (session !== undefined) return session;
    await deps.records.deleteByIds(written.map((r) => r._id));
    await deps.projections.deleteSession(triple);
    return undefined;
  }

  /**
   * The session after a spawn's writes, the task noted on it: one write when
   * the session is visible; otherwise as {@link sessionAfter} (a session
   * seen first on the stream is opened, then noted).
   */
  async function sessionAfterSpawn(
    triple: SessionTriple,
    taskId: string,
    counted: number | undefined,
    written: readonly StateRecordDoc[],
  ): Promise<SessionDoc | undefined> {
    const task = { id: taskId, total: counted ?? (await deps.projections.taskTotal(triple)) };
    const noted = await deps.sessions.noteSpawn(triple, task);
    if (noted !== null) return noted;
    const session = await sessionAfter(triple, written);
    if (session === undefined) return undefined;
    return (await deps.sessions.noteSpawn(triple, task)) ?? session;
  }

  return async (frame) => {
    const transition = transitionOf(frame.type, frame.payload);
    if (transition === undefined) return;
    const triple: SessionTriple = { tenant: frame.tenant, user: frame.user, session: frame.session };
    const input: StateRecordInput = {
      triple,
      streamSequence: frame.sequence,
      occurredAt: toIsoUtc(frame.occurred_at),
      taskId: transition.taskId,
    };
    const spawned = frame.type === 'task.spawned';
    const applied = await deps.projections.applyTask(
      triple,
      transition.taskId,
      transition.status,
      frame.sequence,
      spawned,
    );
    const written: StateRecordDoc[] = [];
    let query: QueryOutcome | undefined;
    if (transition.isTurn) {
      query = await readQuery(triple, transition.taskId);
      written.push(turnRecord(input, 'query' in query ? query.query : undefined));
    }
    written.push(taskStateRecord(input, transition.status, transition.priorStatus ?? applied.prior));
    await deps.records.insertAll(written);

    // Read after the writes, so that an erasure racing them is seen (the entry is a tombstone by then).
    const session = spawned
      ? await sessionAfterSpawn(triple, transition.taskId, applied.total, written)
      : await sessionAfter(triple, written);
    if (session === undefined) return;
    await deps.sessions.noteActivity(triple, input.occurredAt, session);
    if (query !== undefined) await nameSession(triple, query, session);
    deps.logger.debug({ sequence: frame.sequence, eventType: frame.type }, 'state records written');
  };
}
