import { setTimeout as delay } from 'node:timers/promises';
import type { Bus, EventPublisher } from '@ars/bus';
import { newTaskRecord } from '../domain/start.ts';
import type { Logger } from '@ars/telemetry';
import {
  GROUP_CANCEL_ORIGINS,
  decideGroup,
  groupCompletion,
  groupIdOf,
  memberSpawnKey,
  settleGroup,
} from '../domain/task-group.ts';
import type { GroupCancelOrigin, GroupCompletion, MemberOutcome } from '../domain/task-group.ts';
import { newTaskId } from '../domain/task-id.ts';
import { BACKGROUND_KIND, isTerminal } from '../domain/task.ts';
import type { TaskRecord } from '../domain/task.ts';
import type { RunStateRepository } from '../store/run-state.repository.ts';
import type { TaskGroupRecord, TaskGroupRepository } from '../store/task-group.repository.ts';
import type { TaskRepository } from '../store/task.repository.ts';
import { declaredBuiltin } from '../tools/builtins.ts';
import { ToolError } from '../tools/tool.ts';
import type { ToolContext, ToolDefinition } from '../tools/tool.ts';
import { announceRun } from './announce.ts';
import { cancelChild } from './run-finish.ts';
import type { Run } from './run-loop.ts';

/**
 * Task groups: the `spawn_group` tool fans a run out into child tasks. With
 * `retain_turn` (the default) the owner keeps its turn: the call waits until
 * every child ended and returns the group completion as its result, and the
 * owner decides and publishes the group's end. Without it the call returns
 * once the group is sealed and the owner's turn goes on; the children are
 * background tasks (their completions are acknowledged by a later run of
 * the session, `background-ack.ts`), and each child's executor, once its
 * run ended, settles the group ({@link settlingGroupOnEnd}): the last one to
 * end publishes `task.group_resolved` (or `task.group_cancelled`).
 *
 * Durable across any executor dying: the group record (members, seal,
 * outcomes, resolution) is in the store; its id derives from the run and
 * the planner step, its children are spawned under fixed idempotency keys
 * and its events carry fixed ids, so the redelivered run's repeated call
 * (the tool is idempotent) finds the group where it was and spawns no child
 * twice. The owner learns that a child ended by reading the store every
 * `pollMs`: each member's executor records its outcome (and answer) in the
 * group before it marks its task terminal, and a terminal row without a
 * recorded outcome (a task withdrawn or erased) counts with its row status.
 * A member's run message is acknowledged only once its group is settled, so
 * a member whose executor died in between settles it on redelivery.
 */

/** What the tool needs. */
export interface TaskGroupDeps {
  readonly bus: Bus;
  readonly publisher: EventPublisher;
  readonly tasks: TaskRepository;
  readonly runStates: RunStateRepository;
  readonly groups: TaskGroupRepository;
  /** How often the owner reads its members' state, in ms. */
  readonly pollMs: number;
  readonly logger?: Logger;
}

interface SpawnArgs {
  readonly tasks: readonly { readonly query: string; readonly agent_id?: string }[];
  readonly fail_fast: boolean;
  readonly retain_turn: boolean;
  readonly description: string;
}

/** A member as the owner sees it at one poll. */
interface MemberState {
  readonly taskId: string;
  readonly status: string;
  readonly outcome?: MemberOutcome;
}

/** `spawn_group`: idempotent (a repeated call finds its group); never retried by policy (it waits itself). */
export function createSpawnGroupTool(deps: TaskGroupDeps): ToolDefinition {
  return {
    ...declaredBuiltin('spawn_group'),
    retry: { maxAttempts: 1, backoffMs: 0 },
    run: async (args, context) => JSON.stringify(await runGroup(deps, args as unknown as SpawnArgs, context)),
  };
}

async function runGroup(deps: TaskGroupDeps, args: SpawnArgs, context: ToolContext) {
  const owner = await deps.tasks.getTask(context.taskId);
  if (owner === null) throw new ToolError('permanent', `owner task ${context.taskId} is not stored`);
  const emit = groupEmitter(deps, owner);
  const groupId = groupIdOf(owner.task_id, await currentStep(deps, owner.task_id));
  let group = await deps.groups.create(
    {
      group_id: groupId,
      owner_task_id: owner.task_id,
      tenant: owner.tenant,
      user: owner.user,
      session: owner.session,
      fail_fast: args.fail_fast,
      retain_turn: args.retain_turn,
      description: args.description,
    },
    new Date().toISOString(),
  );
  await emit('task.group_created', {
    GroupID: groupId,
    OwnerTaskID: owner.task_id,
    RetainTurn: group.retain_turn,
    FailFast: group.fail_fast,
    Description: group.description,
  });
  if (group.sealed_at === undefined) {
    const members = await spawnMembers(deps, owner, group, args.tasks);
    group = await deps.groups.seal(groupId, members, Date.now());
  }
  await emit('task.group_sealed', { GroupID: groupId, Members: group.members ?? [], SealedAt: group.sealed_at });
  if (group.retain_turn) return waitGroup(deps, group, owner, emit, context);
  // Members that ended before the seal (a redelivered owner sealing late) found nothing to settle.
  await settleMemberGroup(deps, groupId);
  return { GroupID: groupId, OwnerTaskID: owner.task_id, RetainTurn: false, Members: group.members ?? [] };
}

/**
 * The planner step the owner is in: one past its stored checkpoint's (a
 * step's checkpoint is written once its tool call ended), the same when a
 * redelivered run replays the step.
 */
async function currentStep(deps: TaskGroupDeps, ownerTaskId: string): Promise<number> {
  return ((await deps.runStates.load(ownerTaskId))?.step ?? 0) + 1;
}

type Emit = (type: string, payload: Record<string, unknown>) => Promise<void>;

/** Publishes a group event of the owner run under a fixed id (a redelivered owner's copy is dropped). */
function groupEmitter(deps: TaskGroupDeps, owner: Pick<TaskRecord, 'tenant' | 'user' | 'session' | 'task_id'>): Emit {
  const identity = { tenant: owner.tenant, user: owner.user, session: owner.session, run: owner.task_id };
  return async (type, payload) => {
    const groupId = (payload.GroupID ?? (payload.Completion as GroupCompletion).GroupID) as string;
    await deps.publisher.publish({ type, identity, eventId: `${groupId}:${type}`, payload });
  };
}

/** Inserts (or finds again) and announces each child, in order; returns their task ids. */
async function spawnMembers(
  deps: TaskGroupDeps,
  owner: TaskRecord,
  group: TaskGroupRecord,
  tasks: SpawnArgs['tasks'],
): Promise<string[]> {
  const groupId = group.group_id;
  const triple = { tenant: owner.tenant, user: owner.user, session: owner.session };
  // Nobody waits on the members of a group that does not retain the turn: they are background tasks.
  const kind = group.retain_turn ? {} : { kind: BACKGROUND_KIND };
  const members: string[] = [];
  for (const [index, spec] of tasks.entries()) {
    const record = newTaskRecord({
      taskId: newTaskId(),
      triple,
      request: {
        identity: {},
        query: spec.query,
        priority: owner.priority,
        idempotency_key: memberSpawnKey(groupId, index),
      },
      agent: spec.agent_id === undefined ? {} : { agent_id: spec.agent_id },
      artifacts: [],
      now: new Date().toISOString(),
    });
    const { task, reused } = await deps.tasks.insertTask({
      ...record,
      ...kind,
      parent_task_id: owner.task_id,
      group_id: groupId,
    });
    // A child inserted by a dead owner may never have been announced: announcing again is deduplicated.
    if (!reused || (task.status === 'pending' && task.spawned_sequence === undefined)) await announceRun(deps, task);
    members.push(task.task_id);
  }
  return members;
}

/** Reads every member's row and recorded outcome. */
async function readMembers(deps: TaskGroupDeps, groupId: string): Promise<[TaskGroupRecord, MemberState[]]> {
  const group = await deps.groups.get(groupId);
  if (group === null) throw new ToolError('permanent', `task group ${groupId} is not stored`);
  return [group, await membersOf(deps, group)];
}

/** Each member's state: its row and the outcome its group recorded. */
async function membersOf(deps: TaskGroupDeps, group: TaskGroupRecord): Promise<MemberState[]> {
  const rows = await Promise.all((group.members ?? []).map((id) => deps.tasks.getTask(id)));
  return (group.members ?? []).map((taskId, i): MemberState => {
    const row = rows[i];
    const recorded = group.outcomes?.[taskId];
    const status = row?.status ?? 'cancelled';
    const fromRow = isTerminal(row?.status ?? 'cancelled')
      ? { status: status as MemberOutcome['status'], ...(row?.error_code ? { error_code: row.error_code } : {}) }
      : undefined;
    // The row is the truth once terminal (a finisher that lost the task's terminal mark may have recorded first).
    const outcome = fromRow !== undefined && recorded?.status !== fromRow.status ? fromRow : (recorded ?? fromRow);
    return { taskId, status, ...(outcome === undefined ? {} : { outcome }) };
  });
}

/** Polls until the group is decided (or the owner is cancelled); publishes the decision; returns the completion. */
async function waitGroup(
  deps: TaskGroupDeps,
  sealed: TaskGroupRecord,
  owner: TaskRecord,
  emit: Emit,
  context: ToolContext,
): Promise<GroupCompletion> {
  for (;;) {
    const [group, members] = await readMembers(deps, sealed.group_id);
    if (group.resolution?.kind === 'cancelled' && group.resolution.origin !== GROUP_CANCEL_ORIGINS.failFast) {
      throw new ToolError('cancelled', `task group ${group.group_id} was cancelled (${group.resolution.origin})`);
    }
    if (context.cancelled?.() === true) {
      await cancelGroup(deps, group, owner, members, GROUP_CANCEL_ORIGINS.parentCancelled, emit);
      throw new ToolError('cancelled', `the owner run was cancelled; task group ${group.group_id} was cancelled`);
    }
    const decision = decideGroup(
      group.fail_fast,
      members.map((m) => m.outcome),
    );
    if (decision === 'resolved' || group.resolution?.kind === 'resolved') {
      await deps.groups.resolve(group.group_id, { kind: 'resolved' });
      const completion = groupCompletion(group, members);
      await emit('task.group_resolved', { Completion: completion });
      return completion;
    }
    if (decision === 'fail_fast' || group.resolution !== undefined) {
      return cancelGroup(deps, group, owner, members, GROUP_CANCEL_ORIGINS.failFast, emit, context);
    }
    await delay(deps.pollMs, undefined, { signal: context.signal }).catch(() => {
      throw new ToolError('cancelled', 'aborted');
    });
  }
}

/**
 * Cancels the members still running (hard: their work is no longer wanted)
 * and records the resolution; a fail-fast group then waits for them to end
 * (bounded by the owner's own cancellation) so that its completion is final.
 */
async function cancelGroup(
  deps: TaskGroupDeps,
  group: TaskGroupRecord,
  owner: TaskRecord,
  members: readonly MemberState[],
  origin: GroupCancelOrigin,
  emit: Emit,
  context?: ToolContext,
): Promise<GroupCompletion> {
  await deps.groups.resolve(group.group_id, { kind: 'cancelled', origin });
  const reason = `task group ${group.group_id} was cancelled (${origin})`;
  const live = members.filter((m) => m.outcome === undefined);
  const rows = await Promise.all(live.map((m) => deps.tasks.getTask(m.taskId)));
  await Promise.all(
    rows.map((row) => (row === null ? undefined : cancelChild(deps, owner.task_id, row, { reason, hard: true }))),
  );
  let settled = members;
  while (context !== undefined && settled.some((m) => m.outcome === undefined) && context.cancelled?.() !== true) {
    await delay(deps.pollMs, undefined, { signal: context.signal }).catch(() => {
      throw new ToolError('cancelled', 'aborted');
    });
    [, settled] = await readMembers(deps, group.group_id);
  }
  const completion = groupCompletion(group, settled);
  await emit('task.group_cancelled', { Completion: completion, Origin: origin });
  return completion;
}

/**
 * Settles group `groupId` when its owner does not wait on it (see
 * {@link settleGroup}): records the resolution once decided, hard-cancels
 * the members still running of a cancelled group, and publishes the
 * resolution once every member ended (under the owner run, fixed ids: the
 * members ending at once publish it once). A retaining group is its owner's.
 */
export async function settleMemberGroup(deps: TaskGroupDeps, groupId: string): Promise<void> {
  const group = await deps.groups.get(groupId);
  // Erased with its session, its owner's to settle, or not sealed yet (the owner settles once it seals).
  if (group === null || group.retain_turn || group.sealed_at === undefined) return;
  const members = await membersOf(deps, group);
  const owner = await deps.tasks.getTask(group.owner_task_id);
  const settled = settleGroup({
    failFast: group.fail_fast,
    resolution: group.resolution,
    outcomes: members.map((m) => m.outcome),
    ownerCancelled: owner?.status === 'cancelled',
  });
  if (settled.resolution === undefined) return;
  const resolution = await deps.groups.resolve(groupId, settled.resolution);
  if (resolution.kind === 'cancelled' && members.some((m) => m.outcome === undefined)) {
    const reason = `task group ${groupId} was cancelled (${resolution.origin})`;
    const live = await Promise.all(
      members.filter((m) => m.outcome === undefined).map((m) => deps.tasks.getTask(m.taskId)),
    );
    await Promise.all(
      live.map((row) =>
        row === null ? undefined : cancelChild(deps, group.owner_task_id, row, { reason, hard: true }),
      ),
    );
  }
  if (!settled.publish || (await someStillFinishing(deps, members))) return;
  const emit = groupEmitter(deps, { ...group, task_id: group.owner_task_id });
  const completion = groupCompletion(group, members);
  if (resolution.kind === 'resolved') await emit('task.group_resolved', { Completion: completion });
  else await emit('task.group_cancelled', { Completion: completion, Origin: resolution.origin });
}

/**
 * Whether a member ended but its executor has not finished with it: its run
 * state keeps the outcome until the answer joined the session's turns (and
 * the rest of a run's end is done). That member settles the group itself
 * once done, so the group's end is published only after every member's
 * answer is in the session: a run started on `task.group_resolved` sees them.
 */
async function someStillFinishing(deps: TaskGroupDeps, members: readonly MemberState[]): Promise<boolean> {
  const states = await Promise.all(members.map((m) => deps.runStates.load(m.taskId)));
  return states.some((state) => state?.terminal !== undefined);
}

/** How long a member whose group could not be settled waits before its run message comes back, in ms. */
const SETTLE_RETRY_MS = 1_000;

/**
 * `run`, which (when it is a group member's) settles its group once it
 * ended. Its message is acknowledged only after that: a settle that failed
 * (or an executor that died first) retries it, and the redelivered run,
 * already ended, settles again.
 */
export function settlingGroupOnEnd(run: Run, deps: TaskGroupDeps): Run {
  return {
    taskId: run.taskId,
    signals: run.signals,
    get task() {
      return run.task;
    },
    async execute() {
      const exit = await run.execute();
      const groupId = run.task?.group_id;
      if (exit.kind !== 'done' || groupId === undefined) return exit;
      try {
        await settleMemberGroup(deps, groupId);
        return exit;
      } catch (error) {
        deps.logger?.warn({ err: error, taskId: run.taskId, groupId }, 'task group not settled; the run comes back');
        return { kind: 'retry', delayMs: SETTLE_RETRY_MS };
      }
    },
  };
}
