import { setTimeout as delay } from 'node:timers/promises';
import type { Bus, EventPublisher } from '@ars/bus';
import { newTaskRecord } from '../domain/start.ts';
import { GROUP_CANCEL_ORIGINS, decideGroup, groupCompletion, groupIdOf, memberSpawnKey } from '../domain/task-group.ts';
import type { GroupCancelOrigin, GroupCompletion, MemberOutcome } from '../domain/task-group.ts';
import { newTaskId } from '../domain/task-id.ts';
import { isTerminal } from '../domain/task.ts';
import type { TaskRecord } from '../domain/task.ts';
import type { RunStateRepository } from '../store/run-state.repository.ts';
import type { TaskGroupRecord, TaskGroupRepository } from '../store/task-group.repository.ts';
import type { TaskRepository } from '../store/task.repository.ts';
import { declaredBuiltin } from '../tools/builtins.ts';
import { ToolError } from '../tools/tool.ts';
import type { ToolContext, ToolDefinition } from '../tools/tool.ts';
import { announceRun } from './announce.ts';
import { cancelChild } from './run-finish.ts';

/**
 * Task groups: the `spawn_group` tool fans a run out into child tasks, waits
 * until every one ended and returns the group completion as its result.
 *
 * Durable across the owner's executor dying: the group record (members,
 * seal, outcomes, resolution) is in the store; its id derives from the run
 * and the call, its children are spawned under fixed idempotency keys and
 * its events carry fixed ids, so the redelivered run's repeated call (the
 * tool is idempotent) finds the group where it was and spawns no child
 * twice. The owner learns that a child ended by reading the store every
 * `pollMs`: each member's executor records its outcome (and answer) in the
 * group before it marks its task terminal, and a terminal row without a
 * recorded outcome (a task withdrawn or erased) counts with its row status.
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
  const groupId = groupIdOf(owner.task_id, context.callId);
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
    const members = await spawnMembers(deps, owner, groupId, args.tasks);
    group = await deps.groups.seal(groupId, members, Date.now());
  }
  await emit('task.group_sealed', { GroupID: groupId, Members: group.members ?? [], SealedAt: group.sealed_at });
  return waitGroup(deps, group, owner, emit, context);
}

type Emit = (type: string, payload: Record<string, unknown>) => Promise<void>;

/** Publishes a group event of the owner run under a fixed id (a redelivered owner's copy is dropped). */
function groupEmitter(deps: TaskGroupDeps, owner: TaskRecord): Emit {
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
  groupId: string,
  tasks: SpawnArgs['tasks'],
): Promise<string[]> {
  const triple = { tenant: owner.tenant, user: owner.user, session: owner.session };
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
  const rows = await Promise.all((group.members ?? []).map((id) => deps.tasks.getTask(id)));
  const states = (group.members ?? []).map((taskId, i): MemberState => {
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
  return [group, states];
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
