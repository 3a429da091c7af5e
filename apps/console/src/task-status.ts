import type { EventFrame, TaskListResponse } from '@ars/client';

/** A task row as tasks.list returns it. */
export type TaskRow = TaskListResponse['items'][number];
export type TaskStatus = TaskRow['status'];
export type StatusCounts = Pick<TaskListResponse['counts'], TaskStatus>;

export const TASK_STATUSES: readonly TaskStatus[] = ['pending', 'running', 'paused', 'complete', 'failed', 'cancelled'];

/** The status a task event moves its task to; undefined for events that do not change it. */
export function statusAfter(frame: Pick<EventFrame, 'type'>): TaskStatus | undefined {
  switch (frame.type) {
    case 'task.spawned':
      return 'pending';
    case 'task.started':
      return 'running';
    case 'task.completed':
      return 'complete';
    case 'task.failed':
      return 'failed';
    case 'task.cancelled':
      return 'cancelled';
    default:
      return undefined;
  }
}

/** The event types that move a task between statuses (the runs list follows these). */
export const STATUS_EVENT_TYPES = [
  'task.spawned',
  'task.started',
  'task.completed',
  'task.failed',
  'task.cancelled',
] as const;

/** The task id an event is about: its `run`, else the payload's TaskID. */
export function taskIdOf(frame: EventFrame): string {
  const fromPayload = frame.payload.TaskID;
  return frame.run !== '' ? frame.run : typeof fromPayload === 'string' ? fromPayload : '';
}

export function isTerminalStatus(status: TaskStatus): boolean {
  return status === 'complete' || status === 'failed' || status === 'cancelled';
}
