import type { IdentityQuad, LlmOverridesView } from '@ars/contracts';
import type { DottedPath, Store, StoreDocument } from '@ars/store';
import type { OverridesPatch } from '../domain/overrides.ts';

/** A tenant's LLM overrides (`_id` = tenant). */
interface OverridesDocument extends StoreDocument {
  tenant: string;
  overrides?: LlmOverridesView;
  updated_at: string;
  updated_by: IdentityQuad;
}

/** A tenant's overrides as read. */
export interface TenantOverrides {
  readonly tenant: string;
  readonly overrides: LlmOverridesView;
  /** Absent when the tenant never had overrides. */
  readonly updated_at?: string;
}

/** Tenant LLM overrides. */
export interface OverridesRepository {
  get(tenant: string): Promise<TenantOverrides>;
  /** Applies the patch atomically (set members, clear the nulled ones) and returns the result. */
  apply(tenant: string, patch: OverridesPatch, actor: IdentityQuad, at: string): Promise<Required<TenantOverrides>>;
}

export const TENANT_OVERRIDES_COLLECTION = 'tenant_overrides';

/** The store-backed overrides repository (collection `tenant_overrides`). */
export function createOverridesRepository(store: Store): OverridesRepository {
  const collection = store.collection<OverridesDocument>(TENANT_OVERRIDES_COLLECTION, { cacheReads: true });
  return {
    async get(tenant) {
      const doc = await collection.findOne({ _id: tenant });
      if (doc === null) return { tenant, overrides: {} };
      return { tenant, overrides: doc.overrides ?? {}, updated_at: doc.updated_at };
    },
    async apply(tenant, patch, actor, at) {
      const set: Record<DottedPath, unknown> = {};
      for (const [member, value] of Object.entries(patch.set)) set[`overrides.${member}`] = value;
      const unset: Record<DottedPath, ''> = {};
      for (const member of patch.clear) unset[`overrides.${member}`] = '';
      const after = await collection.findOneAndUpdate(
        { _id: tenant },
        {
          $set: { ...set, tenant, updated_at: at, updated_by: actor },
          ...(patch.clear.length > 0 ? { $unset: unset } : {}),
        },
        { upsert: true, returnDocument: 'after' },
      );
      return { tenant, overrides: after?.overrides ?? {}, updated_at: at };
    },
  };
}
