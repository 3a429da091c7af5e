import type { IdentityQuad } from '@ars/contracts';
import { isDuplicateKeyError } from '@ars/store';
import type { Collection, Store } from '@ars/store';

/**
 * Whether the tenant trusts an MCP server's raw HTML (`mcp.servers.set_raw_html_trust`):
 * per (tenant, agent, server id), or per (tenant, server id) for every agent
 * of the tenant. An agent's own setting wins over the tenant-wide one;
 * nothing set is not trusted. `_id` is the JSON of [tenant, agent id or
 * null, server id].
 */
export interface HtmlTrustRecord {
  _id: string;
  tenant: string;
  /** null: the tenant-wide setting of the server id. */
  agent_id: string | null;
  server_id: string;
  trusted: boolean;
  set_by: IdentityQuad;
  /** ISO 8601 UTC. */
  updated_at: string;
}

/** The trust of each server of a tenant. */
export type TrustOf = (agentId: string, serverId: string) => boolean;

export interface HtmlTrustRepository {
  /** Sets the trust; `changed` is false when it was already so (absent counts as untrusted). */
  set(
    tenant: string,
    agentId: string | undefined,
    serverId: string,
    trusted: boolean,
    setBy: IdentityQuad,
  ): Promise<{ changed: boolean }>;
  /** The tenant's settings, as a lookup. */
  ofTenant(tenant: string): Promise<TrustOf>;
}

/** More settings than a tenant has servers is a bug somewhere; the read stays bounded. */
const MAX_SETTINGS_PER_TENANT = 10_000;

const idOf = (tenant: string, agentId: string | null, serverId: string) => JSON.stringify([tenant, agentId, serverId]);

/** The store-backed {@link HtmlTrustRepository}; creates its index. */
export async function createHtmlTrustRepository(store: Store): Promise<HtmlTrustRepository> {
  const settings: Collection<HtmlTrustRecord> = store.collection<HtmlTrustRecord>('mcp_raw_html_trust');
  await settings.createIndex({ tenant: 1 });

  return {
    async set(tenant, agentId, serverId, trusted, setBy) {
      const agent = agentId ?? null;
      const write = () =>
        settings.findOneAndUpdate(
          { _id: idOf(tenant, agent, serverId) },
          {
            $set: { trusted, set_by: setBy, updated_at: new Date().toISOString() },
            $setOnInsert: { tenant, agent_id: agent, server_id: serverId },
          },
          { upsert: true, returnDocument: 'before' },
        );
      let before: HtmlTrustRecord | null;
      try {
        before = await write();
      } catch (error) {
        // Two first writes raced on the upsert: the document exists now, so this one updates it.
        if (!isDuplicateKeyError(error)) throw error;
        before = await write();
      }
      return { changed: (before?.trusted ?? false) !== trusted };
    },
    async ofTenant(tenant) {
      const found = await settings.find({ tenant }, { limit: MAX_SETTINGS_PER_TENANT });
      const byKey = new Map(found.map((r) => [JSON.stringify([r.agent_id, r.server_id]), r.trusted]));
      return (agentId, serverId) =>
        byKey.get(JSON.stringify([agentId, serverId])) ?? byKey.get(JSON.stringify([null, serverId])) ?? false;
    },
  };
}
