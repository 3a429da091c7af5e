import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  isServiceError,
  MCPServerGetRequest,
  MCPServerHealthRequest,
  MCPServerPolicyRequest,
  MCPServerProbeRequest,
  MCPServerPromptsRequest,
  MCPServerRefreshDiscoveryRequest,
  MCPServerResourcesRequest,
  MCPServersListRequest,
  PROTOCOL_VERSION,
  ReadMCPResourceRequest,
  ServiceError,
} from '@ars/contracts';
import type {
  MCPServerHealthResponse,
  MCPServerPolicyResponse,
  MCPServerProbeResponse,
  MCPServerPromptsResponse,
  MCPServerRefreshDiscoveryResponse,
  MCPServerResourcesResponse,
  MCPServersListResponse,
  ReadMCPResourceResponse,
  VerifiedIdentity,
} from '@ars/contracts';
import type { RpcHandler } from '@ars/bus';
import { reconcileIdentity, typedMethod } from '@ars/service-kit';
import { liveAgent } from '../handlers/agent-state.ts';
import type { AgentLookup } from '../handlers/agent-state.ts';
import { visibleToModel } from './apps.ts';
import type { ServerConnection } from './connection.ts';
import type { HtmlTrustRepository } from './html-trust.repository.ts';
import { exposedToolName } from './naming.ts';
import { OffloadRefusal } from './offload.ts';
import type { Offloader } from './offload.ts';
import type { ConnectionPool } from './pool.ts';
import {
  allowedTools,
  DISCOVERY_PAGE_SIZE,
  egressOf,
  locateServer,
  offsetPage,
  serverRecord,
  serversOfTenant,
} from './server-view.ts';
import type { LocatedServer } from './server-view.ts';

/**
 * The public `mcp.servers.*` methods over this replica's live connections.
 * Auth per the registry: R (any caller of the tenant) or M; no crossing is
 * declared for them, so the body identity must be the caller's (the kit's
 * reconciliation answers 401 `identity_required` otherwise). `list` and `get`
 * never open a connection; `health`, `probe`, `prompts`, `resources`,
 * `read_resource` and `refresh_discovery` open it on first use.
 */

/** What the handlers read. */
export interface ServerHandlerDeps {
  readonly lookup: AgentLookup;
  readonly pool: ConnectionPool;
  /** Bounds one MCP request made for a public method, in ms. */
  readonly requestTimeoutMs: number;
  /** The tenants' raw HTML trust (`raw_html_trusted`); absent: nothing is trusted. */
  readonly trust?: HtmlTrustRepository;
  /** Offloads large resource reads; absent: a read is answered whole. */
  readonly offloader?: Offloader;
}

const versioned = <T extends object>(result: T) => ({ ...result, protocol_version: PROTOCOL_VERSION });

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A failed MCP request of a public read, as its answer. */
export function readFailure(serverId: string, error: unknown): ServiceError {
  if (isServiceError(error)) return error;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout)
      return new ServiceError('timeout', `MCP server ${serverId} did not answer in time`);
    if (error.code === ErrorCode.InvalidParams || error.code === -32002) {
      return new ServiceError('not_found', `MCP server ${serverId}: ${error.message}`);
    }
  }
  return new ServiceError('unavailable', `MCP server ${serverId} failed: ${errorText(error)}`, { cause: error });
}

export function createMcpServerHandlers(deps: ServerHandlerDeps): Record<string, RpcHandler> {
  const { lookup, pool } = deps;
  const trustOf = async (tenant: string) => (deps.trust === undefined ? () => false : deps.trust.ofTenant(tenant));

  /** The caller's tenant (the body identity reconciled under the method's rules) and the server the body names. */
  async function target(method: string, verified: VerifiedIdentity, body: MCPServerGetRequest) {
    const tenant = reconcileIdentity(method, verified, body.identity).tenant;
    const located = await locateServer(lookup, tenant, body.server_id, body.agent_id);
    return { tenant, located };
  }

  /** This replica's connection of the server, created on first ask (opened by its first use). */
  function connect(tenant: string, verified: VerifiedIdentity, located: LocatedServer, run = ''): ServerConnection {
    const author = { tenant, user: verified.user, session: verified.session, run };
    return pool.connection(tenant, located.agent.agent_id, located.spec, {
      author,
      revision_id: located.agent.revision_id,
    });
  }

  /** A read's contents with its large items stored as artifacts (413 past the cap, 503 when storing fails). */
  async function offloadRead(
    contents: readonly Record<string, unknown>[],
    origin: Parameters<Offloader['resourceContents']>[1],
  ) {
    if (deps.offloader === undefined) return contents;
    try {
      return (await deps.offloader.resourceContents(contents, origin)).contents;
    } catch (error) {
      if (!(error instanceof OffloadRefusal)) throw error;
      throw new ServiceError(error.kind === 'too_large' ? 'payload_too_large' : 'unavailable', error.message, {
        cause: error.cause,
      });
    }
  }

  /**
   * The server's tools a run of the agent may see (its `tool_exposure`
   * applied, app-only tools left out), as exposed names; undefined while
   * the server cannot list its tools.
   */
  async function allowedOf(tenant: string, verified: VerifiedIdentity, located: LocatedServer) {
    const connection = connect(tenant, verified, located);
    const [agent, ready] = await Promise.all([
      liveAgent(lookup, tenant, located.agent.agent_id),
      connection.ready().then(
        () => true,
        () => false,
      ),
    ]);
    if (!ready) return undefined;
    const exposed = connection.tools
      .filter(visibleToModel)
      .map((t) => exposedToolName(located.spec.server_id, t.name))
      .filter((n) => n !== null);
    return allowedTools(exposed, agent?.config.tool_exposure);
  }

  const handlers: Record<string, RpcHandler> = {
    'mcp.servers.list': typedMethod(
      MCPServersListRequest,
      async ({ identity: verified, body }): Promise<MCPServersListResponse> => {
        const tenant = reconcileIdentity('mcp.servers.list', verified, body.identity).tenant;
        const filter = body.filter;
        const text = filter?.text?.toLowerCase();
        const trusted = await trustOf(tenant);
        const records = (await serversOfTenant(lookup, tenant))
          .map((located) =>
            serverRecord(
              located,
              pool.find(tenant, located.agent.agent_id, located.spec),
              trusted(located.agent.agent_id, located.spec.server_id),
            ),
          )
          .filter((r) => filter?.agent_id === undefined || r.agent_id === filter.agent_id)
          .filter((r) => filter?.state === undefined || r.state === filter.state)
          .filter((r) => filter?.transport === undefined || r.transport === filter.transport)
          .filter((r) => text === undefined || `${r.server_id} ${r.url ?? ''}`.toLowerCase().includes(text));
        return versioned(offsetPage('mcp.servers.list', records, body.cursor, body.limit));
      },
    ),
    'mcp.servers.get': typedMethod(MCPServerGetRequest, async ({ identity: verified, body }) => {
      const { tenant, located } = await target('mcp.servers.get', verified, body);
      const trusted = (await trustOf(tenant))(located.agent.agent_id, located.spec.server_id);
      return versioned({
        server: serverRecord(located, pool.find(tenant, located.agent.agent_id, located.spec), trusted),
      });
    }),
    'mcp.servers.health': typedMethod(
      MCPServerHealthRequest,
      async ({ identity: verified, body }): Promise<MCPServerHealthResponse> => {
        const { tenant, located } = await target('mcp.servers.health', verified, body);
        const connection = connect(tenant, verified, located);
        const checked = { server_id: body.server_id, checked_at: new Date().toISOString() };
        try {
          const latency = await connection.ping(deps.requestTimeoutMs);
          return versioned({ ...checked, health: 'ok', latency_ms: latency });
        } catch (error) {
          // Connected but not answering the probe: degraded; not connected at all: down.
          const health = connection.state === 'connected' ? 'degraded' : 'down';
          return versioned({ ...checked, health, error: connection.health().last_error ?? errorText(error) });
        }
      },
    ),
    'mcp.servers.probe': typedMethod(
      MCPServerProbeRequest,
      async ({ identity: verified, body }): Promise<MCPServerProbeResponse> => {
        const { tenant, located } = await target('mcp.servers.probe', verified, body);
        const connection = connect(tenant, verified, located);
        const started = performance.now();
        try {
          await connection.refresh({ force: true });
          const latency = performance.now() - started;
          return versioned({
            server_id: body.server_id,
            ok: true,
            latency_ms: latency,
            tools: connection.tools.map((t) => t.name),
          });
        } catch (error) {
          const latency = performance.now() - started;
          const message = connection.health().last_error ?? errorText(error);
          return versioned({ server_id: body.server_id, ok: false, latency_ms: latency, error: message });
        }
      },
    ),
    'mcp.servers.refresh_discovery': typedMethod(
      MCPServerRefreshDiscoveryRequest,
      async ({ identity: verified, body }): Promise<MCPServerRefreshDiscoveryResponse> => {
        const { tenant, located } = await target('mcp.servers.refresh_discovery', verified, body);
        const connection = connect(tenant, verified, located);
        await connection.refresh().catch((error: unknown) => {
          throw readFailure(body.server_id, error);
        });
        return versioned({
          server_id: body.server_id,
          tools: connection.tools.map((t) => t.name),
          prompt_count: connection.prompts.length,
          resource_count: connection.resources.length,
          refreshed_at: connection.discoveredAt ?? new Date().toISOString(),
        });
      },
    ),
    'mcp.servers.prompts': typedMethod(
      MCPServerPromptsRequest,
      async ({ identity: verified, body }): Promise<MCPServerPromptsResponse> => {
        const { tenant, located } = await target('mcp.servers.prompts', verified, body);
        const connection = connect(tenant, verified, located);
        await connection.ready().catch((error: unknown) => {
          throw readFailure(body.server_id, error);
        });
        const prompts = connection.prompts.map((p) => ({
          name: p.name,
          ...(p.description === undefined ? {} : { description: p.description }),
          ...(p.arguments === undefined ? {} : { arguments: p.arguments as Record<string, unknown>[] }),
        }));
        const page = offsetPage('mcp.servers.prompts', prompts, body.cursor, DISCOVERY_PAGE_SIZE);
        return versioned({ server_id: body.server_id, ...page });
      },
    ),
    'mcp.servers.resources': typedMethod(
      MCPServerResourcesRequest,
      async ({ identity: verified, body }): Promise<MCPServerResourcesResponse> => {
        const { tenant, located } = await target('mcp.servers.resources', verified, body);
        const connection = connect(tenant, verified, located);
        await connection.ready().catch((error: unknown) => {
          throw readFailure(body.server_id, error);
        });
        const resources = connection.resources.map((r) => ({
          uri: r.uri,
          name: r.name,
          ...(r.mimeType === undefined ? {} : { mime_type: r.mimeType }),
          ...(r.description === undefined ? {} : { description: r.description }),
        }));
        const page = offsetPage('mcp.servers.resources', resources, body.cursor, DISCOVERY_PAGE_SIZE);
        return versioned({ server_id: body.server_id, ...page });
      },
    ),
    'mcp.servers.read_resource': typedMethod(
      ReadMCPResourceRequest,
      async ({ identity: verified, body }): Promise<ReadMCPResourceResponse> => {
        const { tenant, located } = await target('mcp.servers.read_resource', verified, body);
        const run = body.identity.run ?? '';
        const connection = connect(tenant, verified, located, run);
        const reader = { tenant, user: verified.user, session: verified.session, run };
        const result = await connection
          .readResource(body.uri, reader, deps.requestTimeoutMs)
          .catch((error: unknown) => {
            throw readFailure(body.server_id, error);
          });
        const read = await offloadRead(result.contents, {
          identity: reader,
          serverId: body.server_id,
          label: body.uri,
        });
        const contents = read.map((c) => ({
          uri: String(c.uri),
          ...(typeof c.mimeType === 'string' ? { mime_type: c.mimeType } : {}),
          ...(typeof c.text === 'string' ? { text: c.text } : {}),
          ...(typeof c.blob === 'string' ? { blob_base64: c.blob } : {}),
          ...(typeof c.artifact_id === 'string'
            ? {
                artifact_id: c.artifact_id,
                size_bytes: c.size_bytes as number,
                resource_link: c.resource_link as Record<string, unknown>,
              }
            : {}),
        }));
        return versioned({ uri: body.uri, contents });
      },
    ),
    'mcp.servers.policy': typedMethod(
      MCPServerPolicyRequest,
      async ({ identity: verified, body }): Promise<MCPServerPolicyResponse> => {
        const { tenant, located } = await target('mcp.servers.policy', verified, body);
        const policy = located.spec.approval_policy;
        const [trusted, allowed] = await Promise.all([trustOf(tenant), allowedOf(tenant, verified, located)]);
        return versioned({
          server_id: body.server_id,
          raw_html_trusted: trusted(located.agent.agent_id, located.spec.server_id),
          ...(policy === undefined ? {} : { approval_policy: policy }),
          ...(allowed === undefined ? {} : { allowed_tools: allowed }),
          egress: egressOf(located.spec),
        });
      },
    ),
    // mcp.servers.bindings.list is served by the OAuth module (`oauth/bindings.handlers.ts`).
  };

  return handlers;
}
