/**
 * The pure rules of task groups: a group's id, its members' spawn keys, the
 * group completion object of `task.group_resolved` / `task.group_cancelled`,
 * and when a group is decided. No I/O here.
 */

/** Why a group was cancelled (`task.group_cancelled` Origin). */
export const GROUP_CANCEL_ORIGINS = {
  /** The owner run was cancelled while it waited on the group. */
  parentCancelled: 'parent_cancelled',
  /** A member failed (or was cancelled) in a fail-fast group. */
  failFast: 'fail_fast',
  /** The group itself was cancelled explicitly. */
  explicit: 'explicit',
} as const;
export type GroupCancelOrigin = (typeof GROUP_CANCEL_ORIGINS)[keyof typeof GROUP_CANCEL_ORIGINS];

/** How one member ended, as the group records it. */
export interface MemberOutcome {
  readonly status: 'complete' | 'failed' | 'cancelled';
  /** The member's final answer (a completion only). */
  readonly answer?: string;
  readonly error_code?: string;
}

/** A group's decided end. */
export type GroupResolution =
  { readonly kind: 'resolved' } | { readonly kind: 'cancelled'; readonly origin: GroupCancelOrigin };

/**
 * The group spawned in planner step `step` of run `ownerTaskId`. Keyed by
 * the step, not by the tool call id: a redelivered run replays the step and
 * a model (the `openai` provider) names its call anew each time, so a key of
 * the call's id made a second group (and spawned every child again).
 */
export function groupIdOf(ownerTaskId: string, step: number): string {
  return `${ownerTaskId}:group:step-${step}`;
}

/** The idempotency key of the group's `index`-th child: spawning it again finds the first one. */
export function memberSpawnKey(groupId: string, index: number): string {
  return `${groupId}:member:${index}`;
}

/** One member in the completion object; Answer and ErrorCode are empty when none, Status is the task's status. */
export interface CompletionMember {
  readonly TaskID: string;
  readonly Status: string;
  readonly Answer: string;
  readonly ErrorCode: string;
}

/** The group completion object (the Completion of `task.group_resolved` and `task.group_cancelled`). */
export interface GroupCompletion {
  readonly GroupID: string;
  readonly OwnerTaskID: string;
  readonly FailFast: boolean;
  readonly Members: readonly CompletionMember[];
}

/** The completion of a group: each member's recorded outcome, else the status its task row has now. */
export function groupCompletion(
  group: { readonly group_id: string; readonly owner_task_id: string; readonly fail_fast: boolean },
  members: readonly { readonly taskId: string; readonly status: string; readonly outcome?: MemberOutcome }[],
): GroupCompletion {
  return {
    GroupID: group.group_id,
    OwnerTaskID: group.owner_task_id,
    FailFast: group.fail_fast,
    Members: members.map(({ taskId, status, outcome }) => ({
      TaskID: taskId,
      Status: outcome?.status ?? status,
      Answer: outcome?.answer ?? '',
      ErrorCode: outcome?.error_code ?? '',
    })),
  };
}

/**
 * What the members' outcomes decide: `resolved` once every member ended;
 * in a fail-fast group, `fail_fast` as soon as one failed or was cancelled
 * (the others are then cancelled); otherwise `undefined` (keep waiting).
 */
export function decideGroup(
  failFast: boolean,
  outcomes: readonly (MemberOutcome | undefined)[],
): 'resolved' | 'fail_fast' | undefined {
  if (failFast && outcomes.some((o) => o !== undefined && o.status !== 'complete')) return 'fail_fast';
  return outcomes.every((o) => o !== undefined) ? 'resolved' : undefined;
}

/** What settling a group nobody waits on decides: its resolution (recorded once), and what follows. */
export interface Settlement {
  /** The resolution to record (the stored one when there is one); undefined: not decided yet. */
  readonly resolution: GroupResolution | undefined;
  /** Cancel the members still running (a cancelled group). */
  readonly cancelLive: boolean;
  /** Publish the resolution's event: the group is decided and every member ended, so its completion is final. */
  readonly publish: boolean;
}

/**
 * Settles a group whose owner does not wait on it (`retain_turn` false),
 * from its members' outcomes as one of them ended: fail-fast as in
 * {@link decideGroup}; an owner run that was cancelled (its cancellation
 * cascaded to the members) cancels it `parent_cancelled` once a member
 * ended cancelled; every member ended resolves it. The event goes out once
 * every member ended (a cancelled group's completion lists each member's end).
 */
export function settleGroup(input: {
  readonly failFast: boolean;
  readonly resolution: GroupResolution | undefined;
  readonly outcomes: readonly (MemberOutcome | undefined)[];
  readonly ownerCancelled: boolean;
}): Settlement {
  let resolution = input.resolution;
  if (resolution === undefined) {
    const decision = decideGroup(input.failFast, input.outcomes);
    if (decision === 'fail_fast') resolution = { kind: 'cancelled', origin: GROUP_CANCEL_ORIGINS.failFast };
    else if (input.ownerCancelled && input.outcomes.some((o) => o?.status === 'cancelled')) {
      resolution = { kind: 'cancelled', origin: GROUP_CANCEL_ORIGINS.parentCancelled };
    } else if (decision === 'resolved') resolution = { kind: 'resolved' };
  }
  return {
    resolution,
    cancelLive: resolution?.kind === 'cancelled',
    publish: resolution !== undefined && input.outcomes.every((o) => o !== undefined),
  };
}
