import type { EventDef } from '../event-def.ts';
import { bool, epochMs, eventsOf, int, list, opaque, quad, status, str, ts } from './fields.ts';

const task = eventsOf('task');

/** Task events (all safe). */
export const TASK_EVENTS: readonly EventDef[] = [
  task(
    'task.spawned',
    { TaskID: str(), Kind: str(), ParentTaskID: str(), Priority: int(), IdempotencyKey: str() },
    'A task was created (ParentTaskID and IdempotencyKey are empty when none).',
  ),
  task(
    'task.started',
    { TaskID: str(), PriorState: status() },
    'An executor started the task; carries the prior status.',
  ),
  task('task.completed', { TaskID: str(), NotifyOnComplete: bool() }, 'The run finished successfully (terminal).'),
  task('task.failed', { TaskID: str(), ErrorCode: str() }, 'The run failed (terminal); carries the ErrorCode.'),
  task('task.cancelled', { TaskID: str(), Reason: str(), Cascaded: bool() }, 'The run was cancelled (terminal).'),
  task('task.paused', { TaskID: str() }, 'Registry-driver scope only; not emitted on the live pause path.'),
  task('task.resumed', { TaskID: str() }, 'Registry-driver scope only; live resume is pause.resumed.'),
  task(
    'task.prioritised',
    { TaskID: str(), PriorPriority: int(), NewPriority: int() },
    'The scheduling priority changed.',
  ),
  task('task.background_acknowledged', { TaskID: str() }, "A background task's completion was acknowledged."),
  task('task.patch_applied', { PatchID: str() }, 'A patch was applied.'),
  task('task.patch_rejected', { PatchID: str() }, 'A patch was rejected.'),
  task(
    'task.group_created',
    { GroupID: str(), OwnerTaskID: str(), RetainTurn: bool(), FailFast: bool(), Description: str() },
    'A task group was created.',
  ),
  task('task.group_sealed', { GroupID: str(), Members: list(str()), SealedAt: epochMs() }, 'A task group was sealed.'),
  task('task.group_resolved', { Completion: opaque('group completion object') }, 'A task group resolved.'),
  task(
    'task.group_cancelled',
    { Completion: opaque('group completion object'), Origin: str().describe('cancel origin') },
    'A task group was cancelled.',
  ),
  task(
    'task.input_disposition.resolved',
    {
      identity: quad(),
      task_id: str(),
      artifact_id: str(),
      mime: str(),
      disposition: str(),
      layer: str(),
      degraded: bool(),
      degraded_from: str().optional(),
      degradation_reason: str().optional(),
      tool: str().optional(),
      occurred_at: ts(),
    },
    "An input artifact's disposition was resolved (lowercase keys).",
  ),
];
