import type { Run } from '../engine/run-loop.ts';
import type { TaskRecord } from '../domain/task.ts';
import { driveFlow } from './driver.ts';
import type { FlowDriverDeps } from './driver.ts';
import { FLOW_TASK_KIND } from './progress.ts';

/**
 * `run`, unless its task is a flow run's parent (kind `flow`): then the
 * flow driver runs it under the same signals (lease, drain, hand-back), so
 * a flow is claimed, heartbeated and redelivered exactly like a run.
 */
export function routingFlowRuns(run: Run, deps: FlowDriverDeps): Run {
  let flowTask: TaskRecord | undefined;
  return {
    taskId: run.taskId,
    signals: run.signals,
    get task() {
      return flowTask ?? run.task;
    },
    async execute() {
      const task = await deps.tasks.getTask(run.taskId).catch(() => null);
      if (task?.kind !== FLOW_TASK_KIND) return run.execute();
      flowTask = task;
      try {
        return await driveFlow(task, deps, run.signals);
      } catch (error) {
        // Before the flow's claim (its record unreadable): its message comes back.
        deps.logger.warn({ err: error, taskId: run.taskId }, 'flow run not claimed; it will be retried');
        return run.signals.exitRequest === undefined ? { kind: 'retry', delayMs: 5_000 } : run.signals.exit();
      } finally {
        run.signals.dispose();
      }
    },
  };
}
