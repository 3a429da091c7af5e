import type { EventFrame, TaskListResponse } from '@ars/client';
import { statusAfter, taskIdOf } from './task-status.ts';
import type { StatusCounts, TaskRow } from './task-status.ts';

/** The runs list as the console shows it: a tasks.list snapshot with the stream's later events applied. */
export interface RunsView {
  /** The snapshot's `sequence`: the stream's events up to it are already in the rows. */
  readonly asOf: number;
  readonly rows: readonly TaskRow[];
  readonly counts: StatusCounts;
  /** Task ids seen on the stream but not in any snapshot yet (a refresh fills them in). */
  readonly unknown: readonly string[];
}

export function viewFromSnapshot(snapshot: TaskListResponse): RunsView {
  const { pending, running, paused, complete, failed, cancelled } = snapshot.counts;
  return {
    asOf: snapshot.sequence,
    rows: snapshot.items,
    counts: { pending, running, paused, complete, failed, cancelled },
    unknown: [],
  };
}

/**
 * Applies one event to the view. Events at or below the snapshot's sequence
 * are already in it and change nothing (the as_of_sequence reconciliation);
 * a later status event moves its row and the counters.
 */
export function applyFrame(view: RunsView, frame: EventFrame): RunsView {
  if (frame.sequence <= view.asOf) return view;
  const next = statusAfter(frame);
  if (next === undefined) return view;
  const id = taskIdOf(frame);
  const index = view.rows.findIndex((row) => row.task_id === id);
  const counts = { ...view.counts };
  if (index === -1) {
    // A task outside the snapshot's page: its old status is unknown, so the counters wait for a refresh.
    if (frame.type !== 'task.spawned')
      return view.unknown.includes(id) ? view : { ...view, unknown: [...view.unknown, id] };
    counts[next] += 1;
    const row: TaskRow = {
      task_id: id,
      status: next,
      kind: typeof frame.payload.Kind === 'string' ? frame.payload.Kind : 'run',
      tenant: frame.tenant,
      user: frame.user,
      session: frame.session,
      query: '',
      goal: '',
      priority: typeof frame.payload.Priority === 'number' ? frame.payload.Priority : 0,
      input_artifacts: [],
      background_acknowledged: false,
      created_at: frame.occurred_at,
      updated_at: frame.occurred_at,
    };
    return { ...view, rows: [row, ...view.rows], counts, unknown: [...view.unknown, id] };
  }
  const row = view.rows[index] as TaskRow;
  if (row.status === next) return view;
  counts[row.status] = Math.max(0, counts[row.status] - 1);
  counts[next] += 1;
  const rows = [...view.rows];
  rows[index] = { ...row, status: next, updated_at: frame.occurred_at };
  return { ...view, rows, counts };
}

/** A fresh snapshot with the stream's events after it re-applied: nothing counted twice, nothing lost. */
export function rebase(snapshot: TaskListResponse, recent: readonly EventFrame[]): RunsView {
  return recent.reduce(applyFrame, viewFromSnapshot(snapshot));
}
