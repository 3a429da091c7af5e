import { ServiceError } from '@ars/contracts';
import type { AgentConfigContent } from '@ars/contracts';
import { findCredential } from './credential-guard.ts';

/**
 * The rules a configuration must keep beyond its schema, checked on every
 * revision write (admin and per-user): no credential in clear, MCP
 * connections that can be dialled, and references that resolve (an MCP
 * connection's OAuth provider, a capability's server and provider).
 */

function refuse(path: string, why: string): never {
  throw new ServiceError('invalid_request', `config${path.replaceAll('/', '.')}: ${why}`);
}

/** An origin as the discovery allow-list keeps it: `http(s)://host[:port]`, nothing after. */
export function normaliseOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  const rest = text.slice(url.origin.length);
  return rest === '' || rest === '/' ? url.origin : undefined;
}

function checkMcpConnections(config: AgentConfigContent): void {
  const providers = new Set((config.oauth_providers ?? []).map((p) => p.provider_name));
  const seen = new Set<string>();
  (config.mcp_connections ?? []).forEach((connection, i) => {
    const at = `/mcp_connections/${i}`;
    if (seen.has(connection.server_id)) refuse(`${at}/server_id`, `server_id ${connection.server_id} appears twice`);
    seen.add(connection.server_id);
    if (connection.transport === 'stdio') {
      if (connection.command === undefined) refuse(`${at}/command`, 'a stdio connection needs a command');
      if (connection.url !== undefined) refuse(`${at}/url`, 'a stdio connection takes no url');
    } else {
      if (connection.url === undefined) refuse(`${at}/url`, `a ${connection.transport} connection needs a url`);
      if (connection.command !== undefined || connection.args !== undefined) {
        refuse(`${at}/command`, `a ${connection.transport} connection takes no command or args`);
      }
    }
    if (connection.oauth_provider !== undefined && !providers.has(connection.oauth_provider)) {
      refuse(`${at}/oauth_provider`, `names no installed OAuth provider (${connection.oauth_provider})`);
    }
  });
}

function checkOAuth(config: AgentConfigContent): void {
  const providers = new Set<string>();
  (config.oauth_providers ?? []).forEach((provider, i) => {
    if (providers.has(provider.provider_name)) {
      refuse(`/oauth_providers/${i}/provider_name`, `provider_name ${provider.provider_name} appears twice`);
    }
    providers.add(provider.provider_name);
  });
  const servers = new Set((config.mcp_connections ?? []).map((c) => c.server_id));
  const pairs = new Set<string>();
  (config.oauth_mcp_capabilities ?? []).forEach((capability, i) => {
    const at = `/oauth_mcp_capabilities/${i}`;
    if (!servers.has(capability.server_id))
      refuse(`${at}/server_id`, `names no MCP connection (${capability.server_id})`);
    if (!providers.has(capability.provider_name)) {
      refuse(`${at}/provider_name`, `names no installed OAuth provider (${capability.provider_name})`);
    }
    const pair = JSON.stringify([capability.server_id, capability.provider_name]);
    if (pairs.has(pair)) refuse(at, 'the same (server_id, provider_name) appears twice');
    pairs.add(pair);
  });
}

function checkOrigins(config: AgentConfigContent): void {
  (config.mcp_discovery_origins ?? []).forEach((origin, i) => {
    if (normaliseOrigin(origin) !== origin) {
      refuse(`/mcp_discovery_origins/${i}`, 'must be an origin such as https://mcp.example.com (no path)');
    }
  });
}

/**
 * Throws 400 `invalid_request` naming the first offending path. A credential
 * is named by its path only: the value is never echoed.
 */
export function checkConfig(config: AgentConfigContent): void {
  const credential = findCredential(config);
  if (credential !== undefined) {
    refuse(
      credential,
      'holds a credential; secrets never go into a revision (install API keys with governance.rotate_key, ' +
        'OAuth secrets with the credential broker)',
    );
  }
  checkOrigins(config);
  checkOAuth(config);
  checkMcpConnections(config);
}
