import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthRequiredServer, IdentityQuad, McpConnection } from '@ars/contracts';
import type { AgentServers } from './agent-servers.ts';

/**
 * How the MCP host reaches an OAuth-bound server: the host asks the gate
 * (agent-registry's `oauth/` module) before it opens or uses a connection.
 * Defined here so that `mcp/` imports nothing from `oauth/`.
 */

/** The grant a connection of an OAuth-bound server carries. */
export interface PoolBinding {
  /** Part of the pool key: connections of two bindings are never shared. */
  readonly binding_id: string;
  /** Hands the transport the binding's access token (`Authorization: Bearer`). */
  readonly authProvider: OAuthClientProvider;
}

/**
 * `open`: not OAuth-bound as far as known (open without a token);
 * `bound`: use the connection of this binding;
 * `auth_required`: no usable grant: list the server under `auth_required`
 * and refuse its calls, without opening anything;
 * `unavailable`: the grant cannot be read now (governance, the
 * authorization server or the provider's credential broker did not
 * answer): like a server that is down; with `refused`, the provider's
 * credential broker refused the binding a credential (a 4xx): asking again
 * fails again, and no interactive authorization exists to fix it.
 */
export type ServerAccess =
  | { readonly kind: 'open' }
  | { readonly kind: 'bound'; readonly binding: PoolBinding }
  | { readonly kind: 'auth_required'; readonly server: AuthRequiredServer }
  | { readonly kind: 'unavailable'; readonly reason: string; readonly refused?: boolean };

/** The gate as the tool host sees it. */
export interface OAuthGate {
  /**
   * How `run` (the run owner's identity, `run` its task id or '') reaches
   * `spec` of `agent`. A bound grant is fresh when answered: one due for
   * refresh is refreshed first, and a failed refresh answers `auth_required`.
   */
  access(run: IdentityQuad, agent: AgentServers, spec: McpConnection): Promise<ServerAccess>;
  /**
   * After a connection opened without a token failed: whether the server
   * asks for OAuth (401 with a resource_metadata WWW-Authenticate); then the
   * server as `auth_required` lists it, else undefined.
   */
  unauthorized(run: IdentityQuad, agent: AgentServers, spec: McpConnection): Promise<AuthRequiredServer | undefined>;
  /** Tells `listener` of every binding whose connections must close (revoked, expired). */
  onBindingClosed(listener: (bindingId: string) => void): void;
}

/** The access of a host without a gate: every server opens without a token. */
export const OPEN_ACCESS: ServerAccess = Object.freeze({ kind: 'open' });
