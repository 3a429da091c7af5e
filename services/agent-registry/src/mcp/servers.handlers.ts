import {
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
import type { HtmlTrustRepository } from './html-trust.repository.ts';
import { exposedToolName } from './naming.ts';
import type { OAuthGate } from './oauth-gate.ts';
import { OffloadRefusal } from './offload.ts';
import type { Offloader } from './offload.ts';
import type { ConnectionPool } from './pool.ts';
import { authorizeFirst, reachForCaller, readWith, unreachedHealth, unreachedProbeError } from './server-access.ts';
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
 * never open a connection; `health`, `probe`, `policy`, `prompts`,
 * `resources`, `read_resource` and `refresh_discovery` open it on first use,
 * through the OAuth gate: an OAuth-bound server with the caller's grant,
 * and without one each answers as `server-access.ts` says.
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
  /** Reaches OAuth-bound servers with the caller's grant; absent: every server opens without a token. */
  readonly oauth?: OAuthGate;
}

const versioned = <T extends object>(result: T) => ({ ...result, protocol_version: PROTOCOL_VERSION });

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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

  /** The caller's way to the server: this replica's connection (of their binding, when OAuth-bound), or why none. */
  const reach = (tenant: string, verified: VerifiedIdentity, located: LocatedServer, run = '') =>
    reachForCaller(
      { pool, ...(deps.oauth === undefined ? {} : { oauth: deps.oauth }) },
      { tenant, user: verified.user, session: verified.session, run },
      located,
    );

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
    const [agent, tools] = await Promise.all([
      liveAgent(lookup, tenant, located.agent.agent_id),
      reach(tenant, verified, located).then((way) =>
        readWith(way, async (connection) => {
          await connection.ready();
          return connection.tools;
        }).catch(() => undefined),
      ),
    ]);
    if (tools === undefined) return undefined;
    const exposed = tools
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
        const way = await reach(tenant, verified, located);
        const checked = { server_id: body.server_id, checked_at: new Date().toISOString() };
        if (way.reached.kind !== 'connection') return versioned({ ...checked, ...unreachedHealth(way.reached) });
        const { connection } = way.reached;
        try {
          const latency = await connection.ping(deps.requestTimeoutMs);
          return versioned({ ...checked, health: 'ok', latency_ms: latency });
        } catch (error) {
          const auth = await way.askedForOAuth();
          if (auth !== undefined)
            return versioned({ ...checked, health: 'auth_required', error: authorizeFirst(auth) });
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
        const started = performance.now();
        const way = await reach(tenant, verified, located);
        const failed = (error: string) =>
          versioned({ server_id: body.server_id, ok: false, latency_ms: performance.now() - started, error });
        if (way.reached.kind !== 'connection') return failed(unreachedProbeError(way.reached));
        const { connection } = way.reached;
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
          if ((await way.askedForOAuth()) !== undefined) return failed('auth_required');
          return failed(connection.health().last_error ?? errorText(error));
        }
      },
    ),
    'mcp.servers.refresh_discovery': typedMethod(
      MCPServerRefreshDiscoveryRequest,
      async ({ identity: verified, body }): Promise<MCPServerRefreshDiscoveryResponse> => {
        const { tenant, located } = await target('mcp.servers.refresh_discovery', verified, body);
        const connection = await readWith(await reach(tenant, verified, located), async (c) => {
          await c.refresh();
          return c;
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
        const listed = await readWith(await reach(tenant, verified, located), async (c) => {
          await c.ready();
          return c.prompts;
        });
        const prompts = listed.map((p) => ({
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
        const listed = await readWith(await reach(tenant, verified, located), async (c) => {
          await c.ready();
          return c.resources;
        });
        const resources = listed.map((r) => ({
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
        const reader = { tenant, user: verified.user, session: verified.session, run };
        const result = await readWith(await reach(tenant, verified, located, run), (c) =>
          c.readResource(body.uri, reader, deps.requestTimeoutMs),
        );
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
