import { ServiceError } from '@ars/contracts';
import type { AgentConfigContent, McpConnection, OAuthMcpCapability, OAuthProviderConfig } from '@ars/contracts';
import { normaliseOrigin } from './config-checks.ts';

/**
 * The member edits of the admin setters, as pure functions from the head's
 * configuration to the next one. Each throws a ServiceError when the edit
 * cannot apply (`not_found` for a member that is not there, `conflict` for
 * one that is, `invalid_request` for a bad value).
 */

/** `add_mcp_connection`: a new server id only; replacing needs remove then add. */
export function addMcpConnection(config: AgentConfigContent, connection: McpConnection): AgentConfigContent {
  const connections = config.mcp_connections ?? [];
  if (connections.some((c) => c.server_id === connection.server_id)) {
    throw new ServiceError('conflict', `MCP connection ${connection.server_id} exists already; remove it first`);
  }
  return { ...config, mcp_connections: [...connections, connection] };
}

/**
 * `remove_mcp_connection`: drops the connection and the OAuth capabilities
 * bound to its server (they would name nothing).
 */
export function removeMcpConnection(config: AgentConfigContent, serverId: string): AgentConfigContent {
  const connections = config.mcp_connections ?? [];
  if (!connections.some((c) => c.server_id === serverId)) {
    throw new ServiceError('not_found', `no MCP connection ${serverId}`);
  }
  const next: AgentConfigContent = { ...config, mcp_connections: connections.filter((c) => c.server_id !== serverId) };
  if (config.oauth_mcp_capabilities !== undefined) {
    next.oauth_mcp_capabilities = config.oauth_mcp_capabilities.filter((c) => c.server_id !== serverId);
  }
  return next;
}

/** `set_oauth_provider`: installs or replaces (by `provider_name`), keeping list order. */
export function setOAuthProvider(config: AgentConfigContent, provider: OAuthProviderConfig): AgentConfigContent {
  const providers = config.oauth_providers ?? [];
  const at = providers.findIndex((p) => p.provider_name === provider.provider_name);
  const next = at === -1 ? [...providers, provider] : providers.map((p, i) => (i === at ? provider : p));
  return { ...config, oauth_providers: next };
}

/** `remove_oauth_provider`: refused while an MCP connection or a capability uses it. */
export function removeOAuthProvider(config: AgentConfigContent, providerName: string): AgentConfigContent {
  const providers = config.oauth_providers ?? [];
  if (!providers.some((p) => p.provider_name === providerName)) {
    throw new ServiceError('not_found', `no OAuth provider ${providerName}`);
  }
  const user =
    (config.mcp_connections ?? []).find((c) => c.oauth_provider === providerName)?.server_id ??
    (config.oauth_mcp_capabilities ?? []).find((c) => c.provider_name === providerName)?.server_id;
  if (user !== undefined) {
    throw new ServiceError('conflict', `OAuth provider ${providerName} is used by MCP server ${user}; unbind it first`);
  }
  return { ...config, oauth_providers: providers.filter((p) => p.provider_name !== providerName) };
}

const samePair = (a: { server_id: string; provider_name: string }, serverId: string, providerName: string) =>
  a.server_id === serverId && a.provider_name === providerName;

/** `register_oauth_mcp_capability`: adds or replaces (by server and provider). */
export function registerOAuthMcpCapability(
  config: AgentConfigContent,
  capability: OAuthMcpCapability,
): AgentConfigContent {
  if (!(config.mcp_connections ?? []).some((c) => c.server_id === capability.server_id)) {
    throw new ServiceError('invalid_request', `capability.server_id: no MCP connection ${capability.server_id}`);
  }
  if (!(config.oauth_providers ?? []).some((p) => p.provider_name === capability.provider_name)) {
    throw new ServiceError(
      'invalid_request',
      `capability.provider_name: no OAuth provider ${capability.provider_name}`,
    );
  }
  const current = config.oauth_mcp_capabilities ?? [];
  const at = current.findIndex((c) => samePair(c, capability.server_id, capability.provider_name));
  const next = at === -1 ? [...current, capability] : current.map((c, i) => (i === at ? capability : c));
  return { ...config, oauth_mcp_capabilities: next };
}

/** `remove_oauth_mcp_capability`. */
export function removeOAuthMcpCapability(
  config: AgentConfigContent,
  serverId: string,
  providerName: string,
): AgentConfigContent {
  const current = config.oauth_mcp_capabilities ?? [];
  if (!current.some((c) => samePair(c, serverId, providerName))) {
    throw new ServiceError('not_found', `no OAuth MCP capability for server ${serverId} and provider ${providerName}`);
  }
  return { ...config, oauth_mcp_capabilities: current.filter((c) => !samePair(c, serverId, providerName)) };
}

/** The discovery allow-list as stored: normalised origins, first occurrence kept. */
export function normaliseOrigins(origins: readonly string[]): string[] {
  const out: string[] = [];
  origins.forEach((origin, i) => {
    const normal = normaliseOrigin(origin);
    if (normal === undefined) {
      throw new ServiceError(
        'invalid_request',
        `origins.${i}: must be an origin such as https://mcp.example.com (no path, no credentials)`,
      );
    }
    if (!out.includes(normal)) out.push(normal);
  });
  return out;
}

/** What a discovery allow-list change grants and revokes. */
export function originsChange(
  before: readonly string[],
  after: readonly string[],
): { granted: string[]; revoked: string[] } {
  return {
    granted: after.filter((o) => !before.includes(o)),
    revoked: before.filter((o) => !after.includes(o)),
  };
}
