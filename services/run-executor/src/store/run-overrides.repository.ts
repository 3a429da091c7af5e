import type { IdentityQuad, RunOverridesView } from '@ars/contracts';
import type { DottedPath, Store, StoreDocument } from '@ars/store';
import type { RunOverridesPatch } from '../engine/run-overrides.ts';
import { sessionKey } from '../domain/session-key.ts';

/** The run overrides collection: one document per (tenant, user, session). */
export const RUN_OVERRIDES_COLLECTION = 'run_overrides';

/** The (tenant, user, session) the overrides belong to. */
export interface OverridesOwner {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

interface RunOverridesDocument extends StoreDocument, OverridesOwner {
  overrides?: RunOverridesView;
  updated_at: string;
  updated_by: IdentityQuad;
}

/** A session's run overrides as read. */
export interface SessionRunOverrides {
  readonly overrides: RunOverridesView;
  /** Absent when the session never had overrides. */
  readonly updated_at?: string;
}

/** Run overrides per session (`runs.set_overrides` writes, the engine reads at each run's claim). */
export interface RunOverridesRepository {
  get(owner: OverridesOwner): Promise<SessionRunOverrides>;
  /** Applies the patch atomically (set members, clear the nulled ones) and returns the result. */
  apply(
    owner: OverridesOwner,
    patch: RunOverridesPatch,
    actor: IdentityQuad,
    at: string,
  ): Promise<Required<SessionRunOverrides>>;
  /** Erasure cascade: deletes the session's overrides; returns how many documents went (0 or 1). */
  eraseSession(owner: OverridesOwner): Promise<number>;
}

/** The store-backed repository. */
export function createRunOverridesRepository(store: Store): RunOverridesRepository {
  const collection = store.collection<RunOverridesDocument>(RUN_OVERRIDES_COLLECTION, { cacheReads: true });
  return {
    async get(owner) {
      const doc = await collection.findOne({ _id: sessionKey(owner) });
      if (doc === null) return { overrides: {} };
      return { overrides: doc.overrides ?? {}, updated_at: doc.updated_at };
    },

    async apply(owner, patch, actor, at) {
      const set: Record<DottedPath, unknown> = {};
      for (const [member, value] of Object.entries(patch.set)) set[`overrides.${member}`] = value;
      const unset: Record<DottedPath, ''> = {};
      for (const member of patch.clear) unset[`overrides.${member}`] = '';
      const after = await collection.findOneAndUpdate(
        { _id: sessionKey(owner) },
        {
          $set: {
            ...set,
            tenant: owner.tenant,
            user: owner.user,
            session: owner.session,
            updated_at: at,
            updated_by: actor,
          },
          ...(patch.clear.length > 0 ? { $unset: unset } : {}),
        },
        { upsert: true, returnDocument: 'after' },
      );
      return { overrides: after?.overrides ?? {}, updated_at: at };
    },

    eraseSession: async (owner) => (await collection.deleteMany({ _id: sessionKey(owner) })).deletedCount,
  };
}
