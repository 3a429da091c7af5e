import { createHash } from 'node:crypto';
import type { BindingScope, SealedSecretView } from '@ars/contracts';
import type { Collection, Store } from '@ars/store';
import type { StoredAuthorizationServer, StoredClient } from './binding.repository.ts';

/**
 * Pending authorizations (`_oauth.begin` → `_oauth.complete`). A flow is
 * found by the SHA-256 of its `state` (the state itself is not stored) and
 * taken once: the first complete deletes it, any later one finds nothing.
 * The PKCE code verifier is kept sealed by governance.
 */

/** One pending authorization. `_id` is {@link flowIdOf} its state. */
export interface FlowRecord {
  _id: string;
  binding_id: string;
  tenant: string;
  user: string;
  session: string;
  /** The run (task id) that asked, whose inbox the completion goes to. */
  run: string;
  agent_id: string;
  server_id: string;
  binding_scope: BindingScope;
  provider_name: string;
  pause_token: string;
  /** Sealed (purpose oauth_flow, context the flow id). */
  verifier: SealedSecretView;
  redirect_uri: string;
  scopes: string[];
  authorization_server: StoredAuthorizationServer;
  client: StoredClient;
  /** Epoch milliseconds after which the flow is refused. */
  expires_ms: number;
  created_at: string;
}

/** The store of pending authorizations. */
export interface FlowRepository {
  put(flow: FlowRecord): Promise<void>;
  /** The flow of `state`, removed: null when none (never begun, taken already, or expired). */
  take(state: string, nowMs: number): Promise<FlowRecord | null>;
  /** Deletes flows expired before `nowMs`; answers how many. */
  prune(nowMs: number): Promise<number>;
}

/** The id a flow is stored under: base64url SHA-256 of its state. */
export function flowIdOf(state: string): string {
  return createHash('sha256').update(state, 'utf8').digest('base64url');
}

/** The store-backed {@link FlowRepository}; creates its index. */
export async function createFlowRepository(store: Store): Promise<FlowRepository> {
  const flows: Collection<FlowRecord> = store.collection<FlowRecord>('mcp_oauth_flows');
  await flows.createIndex({ expires_ms: 1 });

  return {
    async put(flow) {
      await flows.insertOne(flow);
    },
    async take(state, nowMs) {
      const _id = flowIdOf(state);
      const flow = await flows.findOne({ _id });
      if (flow === null) return null;
      // Single use: of two completes racing, only the one whose delete removed it goes on.
      if ((await flows.deleteOne({ _id })).deletedCount !== 1) return null;
      return flow.expires_ms < nowMs ? null : flow;
    },
    async prune(nowMs) {
      return (await flows.deleteMany({ expires_ms: { $lt: nowMs } })).deletedCount;
    },
  };
}
