import type { ApprovalPolicy, IdentityTriple } from '@ars/contracts';
import { canonicalJson } from '@ars/service-kit';
import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Store } from '@ars/store';

/** A tenant's approval policy for one tool (`tools.set_approval_policy`). `_id` is the JSON of [tenant, tool]. */
export interface ApprovalPolicyRecord {
  _id: string;
  tenant: string;
  /** The exposed tool name (a built-in's name, or `<server_id>__<tool>`). */
  tool: string;
  policy: ApprovalPolicy;
  set_by: IdentityTriple;
  /** ISO 8601 UTC. */
  updated_at: string;
}

/** Per-tenant approval policies by tool name. */
export interface ApprovalPolicyRepository {
  get(tenant: string, tool: string): Promise<ApprovalPolicy | null>;
  /** Every policy the tenant set, by tool name. */
  ofTenant(tenant: string): Promise<Record<string, ApprovalPolicy>>;
  /** Sets (or replaces) the tenant's policy for `tool`; setting the same policy again changes nothing. */
  put(tenant: string, tool: string, policy: ApprovalPolicy, setBy: IdentityTriple): Promise<void>;
}

/** More policies than a tenant has tools is a bug somewhere; the read stays bounded. */
const MAX_POLICIES_PER_TENANT = 10_000;

const idOf = (tenant: string, tool: string) => JSON.stringify([tenant, tool]);

export const APPROVAL_POLICIES_COLLECTION = 'tool_approval_policies';

/** The store-backed {@link ApprovalPolicyRepository}; creates its index. */
export async function createApprovalPolicyRepository(store: Store): Promise<ApprovalPolicyRepository> {
  const policies: Collection<ApprovalPolicyRecord> = store.collection<ApprovalPolicyRecord>(
    APPROVAL_POLICIES_COLLECTION,
    {
      cacheReads: true,
    },
  );
  await policies.createIndex({ tenant: 1 });

  return {
    get: async (tenant, tool) => (await policies.findOne({ _id: idOf(tenant, tool) }))?.policy ?? null,
    async ofTenant(tenant) {
      const records = await policies.find({ tenant }, { limit: MAX_POLICIES_PER_TENANT });
      return Object.fromEntries(records.map((r) => [r.tool, r.policy]));
    },
    async put(tenant, tool, policy, setBy) {
      const existing = await policies.findOne({ _id: idOf(tenant, tool) });
      if (existing !== null && canonicalJson(existing.policy) === canonicalJson(policy)) return;
      const write = () =>
        policies.updateOne(
          { _id: idOf(tenant, tool) },
          { $set: { tenant, tool, policy, set_by: setBy, updated_at: new Date().toISOString() } },
          { upsert: true },
        );
      try {
        await write();
      } catch (error) {
        // Two first writes raced on the upsert: the document exists now, so this one updates it.
        if (!isDuplicateKeyError(error)) throw error;
        await write();
      }
    },
  };
}
