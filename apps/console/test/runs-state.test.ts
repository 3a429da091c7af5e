import { describe, expect, it } from 'vitest';
import type { EventFrame, TaskListResponse } from '@ars/client';
import { applyFrame, rebase, viewFromSnapshot } from '../src/runs-state.ts';

const row = (task_id: string, status: TaskListResponse['items'][number]['status']) => ({
  task_id,
  status,
  kind: 'run',
  tenant: 't',
  user: 'u',
  session: 's',
  query: 'q',
  goal: 'q',
  priority: 0,
  input_artifacts: [],
  background_acknowledged: false,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
});

const snapshot = (sequence: number, items: TaskListResponse['items']): TaskListResponse => ({
  sequence,
  items,
  counts: {
    pending: items.filter((i) => i.status === 'pending').length,
    running: items.filter((i) => i.status === 'running').length,
    paused: 0,
    complete: items.filter((i) => i.status === 'complete').length,
    failed: 0,
    cancelled: 0,
  },
  counts_complete: true,
  protocol_version: '1.0.0',
});

const frame = (sequence: number, type: string, run: string): EventFrame => ({
  type,
  sequence,
  run,
  occurred_at: '2026-01-01T00:00:01Z',
  tenant: 't',
  user: 'u',
  session: 's',
  payload: { TaskID: run },
});

describe('runs list reconciliation', () => {
  it('ignores events at or below the snapshot sequence: they are already counted', () => {
    const view = viewFromSnapshot(snapshot(10, [row('a', 'complete')]));
    expect(applyFrame(view, frame(9, 'task.completed', 'a'))).toBe(view);
    expect(applyFrame(view, frame(10, 'task.started', 'a'))).toBe(view);
  });

  it('moves a row and its counters on a later status event', () => {
    const view = applyFrame(viewFromSnapshot(snapshot(10, [row('a', 'running')])), frame(11, 'task.completed', 'a'));
    expect(view.rows[0]?.status).toBe('complete');
    expect(view.counts).toMatchObject({ running: 0, complete: 1 });
  });

  it('adds a spawned run and marks it for a refresh; a fresh snapshot re-applies only later events', () => {
    const spawned = frame(11, 'task.spawned', 'b');
    const completed = frame(13, 'task.completed', 'b');
    const view = applyFrame(viewFromSnapshot(snapshot(10, [])), spawned);
    expect(view.unknown).toEqual(['b']);
    expect(view.counts.pending).toBe(1);
    const fresh = rebase(snapshot(12, [row('b', 'running')]), [spawned, completed]);
    expect(fresh.rows.map((r) => r.status)).toEqual(['complete']);
    expect(fresh.counts).toMatchObject({ pending: 0, running: 0, complete: 1 });
    expect(fresh.unknown).toEqual([]);
  });
});
