import type { SessionTurn } from '../store/run-state.repository.ts';
import type { RunState } from './run-state.ts';

/**
 * Background acknowledgement: a background task (kind `background`, not a
 * turn its caller waits for) ends with `task.completed` NotifyOnComplete
 * true, and its answer joins its session's turns marked `background`. The
 * first later run of the session whose prompt holds that turn has taken the
 * completion up: it publishes `task.background_acknowledged` (TaskID the
 * background task's; under a fixed id, so two runs preparing at once publish
 * it once) and then latches the task's `background_acknowledged`. A task
 * already latched is skipped; one read per background turn not yet latched.
 */

/** The fixed event id of a background task's acknowledgement. */
export function backgroundAckEventId(taskId: string): string {
  return `${taskId}:task.background_acknowledged`;
}

/** Acknowledges the background completions among the turns the run's prompt holds. */
export async function acknowledgeBackgroundTurns(run: RunState, turns: readonly SessionTurn[]): Promise<void> {
  const { tasks } = run.deps;
  for (const turn of turns) {
    if (turn.background !== true || turn.task_id === run.taskId) continue;
    const task = await tasks.getTask(turn.task_id);
    if (task === null || task.background_acknowledged) continue;
    await run.events.emitNow(
      'task.background_acknowledged',
      { TaskID: turn.task_id },
      backgroundAckEventId(turn.task_id),
    );
    if (await tasks.acknowledgeBackground(turn.task_id)) {
      run.log.info({ backgroundTaskId: turn.task_id }, 'background completion acknowledged');
    }
  }
}
