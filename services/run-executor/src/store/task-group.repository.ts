import type { Store, StoreDocument } from '@ars/store';
import type { GroupResolution, MemberOutcome } from '../domain/task-group.ts';

/** The task groups collection: one document per group, keyed by its id. */
export const TASK_GROUPS_COLLECTION = 'task_groups';

/** What a group is created with (its id derives from the owner run and the spawning call). */
export interface NewTaskGroup {
  readonly group_id: string;
  readonly owner_task_id: string;
  /** The owner run's session, so that the session's erasure removes the group (it holds the children's answers). */
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
  readonly fail_fast: boolean;
  readonly retain_turn: boolean;
  readonly description: string;
}

/** A stored group: its members once sealed, each member's outcome once known, its resolution once decided. */
export interface TaskGroupRecord extends StoreDocument, NewTaskGroup {
  created_at: string;
  /** Child task ids, in the order of the spawning call's tasks; set by the seal. */
  members?: string[];
  /** Epoch ms of the seal; the first seal's, kept across a redelivered parent. */
  sealed_at?: number;
  /** Member task id → its outcome (written by the member's executor before it marks the task terminal). */
  outcomes?: Record<string, MemberOutcome>;
  resolution?: GroupResolution;
}

/** Task groups (the `spawn_group` tool writes them; a member's run end records its outcome). */
export interface TaskGroupRepository {
  /** Creates the group unless it exists; returns the stored record (the first creation's). */
  create(group: NewTaskGroup, at: string): Promise<TaskGroupRecord>;
  get(groupId: string): Promise<TaskGroupRecord | null>;
  /** Records the members and the seal time once; returns the stored record (the first seal's time). */
  seal(groupId: string, members: readonly string[], sealedAt: number): Promise<TaskGroupRecord>;
  /** Records one member's outcome, keeping the first one recorded. */
  recordOutcome(groupId: string, taskId: string, outcome: MemberOutcome): Promise<void>;
  /** Records the resolution once; returns the stored one (the first). */
  resolve(groupId: string, resolution: GroupResolution): Promise<GroupResolution>;
  /** Deletes the groups of a session's runs (part of its erasure); returns how many. */
  eraseSession(owner: { tenant: string; user: string; session: string }): Promise<number>;
}

/** The store-backed repository. */
export function createTaskGroupRepository(store: Store): TaskGroupRepository {
  const groups = store.collection<TaskGroupRecord>(TASK_GROUPS_COLLECTION);
  const mustExist = (doc: TaskGroupRecord | null, groupId: string): TaskGroupRecord => {
    if (doc === null) throw new Error(`task group ${groupId} is not stored`);
    return doc;
  };
  return {
    async create(group, at) {
      const doc = await groups.findOneAndUpdate(
        { _id: group.group_id },
        { $setOnInsert: { ...group, _id: group.group_id, created_at: at } },
        { upsert: true, returnDocument: 'after' },
      );
      return mustExist(doc, group.group_id);
    },

    get: (groupId) => groups.findOne({ _id: groupId }),

    async seal(groupId, members, sealedAt) {
      await groups.updateOne(
        { _id: groupId, sealed_at: { $exists: false } },
        { $set: { members: [...members], sealed_at: sealedAt } },
      );
      return mustExist(await groups.findOne({ _id: groupId }), groupId);
    },

    async recordOutcome(groupId, taskId, outcome) {
      await groups.updateOne(
        { _id: groupId, [`outcomes.${taskId}`]: { $exists: false } },
        { $set: { [`outcomes.${taskId}`]: outcome } },
      );
    },

    eraseSession: async (owner) =>
      (await groups.deleteMany({ tenant: owner.tenant, user: owner.user, session: owner.session })).deletedCount,
    async resolve(groupId, resolution) {
      await groups.updateOne({ _id: groupId, resolution: { $exists: false } }, { $set: { resolution } });
      return mustExist(await groups.findOne({ _id: groupId }), groupId).resolution ?? resolution;
    },
  };
}
