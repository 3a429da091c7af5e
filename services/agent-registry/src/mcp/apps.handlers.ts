import {
  MCPAppCallToolRequest,
  MCPServerSetRawHTMLTrustRequest,
  PROTOCOL_VERSION,
  ServiceError,
  ToolContextRequest,
} from '@ars/contracts';
import type {
  IdentityQuad,
  MCPAppCallToolResponse,
  MCPServerSetRawHTMLTrustResponse,
  McpAppUi,
  ToolCallRecord,
  ToolContextResponse,
  VerifiedIdentity,
} from '@ars/contracts';
import type { EventPublisher, RpcHandler } from '@ars/bus';
import { reconcileIdentity, requireAdmin, typedMethod } from '@ars/service-kit';
import type { Logger } from '@ars/telemetry';
import type { AgentLookup } from '../handlers/agent-state.ts';
import type { AppContextRecord, AppContextRepository } from './app-context.repository.ts';
import { callableByApp, MCP_APP_MIME_TYPE, VIEW_IFRAME_SANDBOX, viewCsp } from './apps.ts';
import type { CallResults } from './call-results.ts';
import type { ServerConnection } from './connection.ts';
import type { HtmlTrustRepository } from './html-trust.repository.ts';
import { readFailure } from './server-access.ts';
import { locateServer, serversOfTenant } from './server-view.ts';
import type { ToolArgsValidators } from './tool-args.ts';
import type { ToolHost } from './tool-host.ts';

/**
 * The MCP Apps methods: `mcp.apps.tool_context` (R) and `mcp.apps.call_tool`
 * (M) serve an app's view on behalf of the user whose run called the app
 * tool, and only that user: another user's or another tenant's context, an
 * expired one or a missing one are all 404 `not_found`. And the admin
 * toggle `mcp.servers.set_raw_html_trust` (M, A).
 *
 * Raw HTML: a trusted server's context carries the view's HTML (at most
 * {@link APP_HTML_INLINE_MAX_BYTES}) for the console to render as given;
 * otherwise the context carries a sandbox descriptor, and the console reads
 * the HTML with `mcp.servers.read_resource` and renders it in an iframe with
 * that sandbox and Content-Security-Policy, on an origin of its own.
 */

/** The largest view HTML a context carries, in bytes; a larger one is sandboxed. */
export const APP_HTML_INLINE_MAX_BYTES = 512 * 1024;

/** What the apps methods use. */
export interface AppHandlerDeps {
  readonly lookup: AgentLookup;
  readonly host: Pick<ToolHost, 'appConnection'>;
  readonly contexts: AppContextRepository;
  readonly trust: HtmlTrustRepository;
  readonly results: CallResults;
  readonly validators: ToolArgsValidators;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
  /** Records an app's call in the tool metrics. */
  readonly recordCall: (tenant: string, call: ToolCallRecord) => Promise<unknown>;
  /** Bounds one MCP request, in ms. */
  readonly requestTimeoutMs: number;
}

const versioned = <T extends object>(result: T) => ({ ...result, protocol_version: PROTOCOL_VERSION });
const quadOf = (who: { tenant: string; user: string; session: string }, run = ''): IdentityQuad => ({
  tenant: who.tenant,
  user: who.user,
  session: who.session,
  run,
});
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The caller's own unexpired context of the call, else 404 `not_found` (one answer for every other case). */
async function contextOf(
  deps: AppHandlerDeps,
  tenant: string,
  caller: VerifiedIdentity,
  serverId: string,
  toolCallId: string,
): Promise<AppContextRecord> {
  const context = await deps.contexts.get(tenant, serverId, toolCallId);
  if (context === null || context.user !== caller.user) {
    throw new ServiceError('not_found', `no app context of tool call ${toolCallId} on MCP server ${serverId}`);
  }
  return context;
}

/** The connection the context's run used, opened; 404 when the agent no longer has the server. */
async function connectionOf(deps: AppHandlerDeps, context: AppContextRecord): Promise<ServerConnection> {
  const connection = await deps.host.appConnection(quadOf(context, context.run), context.agent_id, context.server_id);
  if (connection === null) {
    throw new ServiceError('not_found', `agent ${context.agent_id} no longer has MCP server ${context.server_id}`);
  }
  await connection.ready().catch((error: unknown) => {
    throw readFailure(context.server_id, error);
  });
  return connection;
}

/** The view's HTML and its `_meta.ui` (from the read, else from the resource listing). */
async function readView(deps: AppHandlerDeps, connection: ServerConnection, uri: string) {
  const read = await connection.readResource(uri, undefined, deps.requestTimeoutMs).catch((error: unknown) => {
    throw readFailure(connection.serverId, error);
  });
  const item = read.contents.find((c) => c.uri === uri) ?? read.contents[0];
  const listed = connection.resources.find((r) => r.uri === uri);
  const ui = isRecord(item?._meta?.ui) ? item._meta.ui : isRecord(listed?._meta?.ui) ? listed._meta.ui : undefined;
  const html = item !== undefined && 'text' in item && typeof item.text === 'string' ? item.text : undefined;
  return { html, meta: ui };
}

/** How the console renders the view (see the module comment). */
async function uiOf(deps: AppHandlerDeps, context: AppContextRecord, trusted: boolean): Promise<McpAppUi> {
  const connection = await connectionOf(deps, context);
  const sandboxed = (meta: Record<string, unknown> | undefined): McpAppUi => ({
    mode: 'sandboxed',
    mime_type: MCP_APP_MIME_TYPE,
    sandbox: { iframe_sandbox: VIEW_IFRAME_SANDBOX, csp: viewCsp(meta), read_with: 'mcp.servers.read_resource' },
    ...(meta === undefined ? {} : { resource_meta: meta }),
  });
  if (!trusted) {
    // The descriptor holds without the read: a server that cannot be read now gets the strictest policy.
    const view = await readView(deps, connection, context.resource_uri).catch((error: unknown) => {
      deps.logger.info({ err: error, server_id: context.server_id }, 'mcp app view not read');
      return { meta: undefined };
    });
    return sandboxed(view.meta);
  }
  const view = await readView(deps, connection, context.resource_uri);
  if (view.html === undefined || Buffer.byteLength(view.html) > APP_HTML_INLINE_MAX_BYTES) return sandboxed(view.meta);
  return {
    mode: 'raw_html',
    mime_type: MCP_APP_MIME_TYPE,
    html: view.html,
    ...(view.meta === undefined ? {} : { resource_meta: view.meta }),
  };
}

function toolContext(deps: AppHandlerDeps): RpcHandler {
  return typedMethod(ToolContextRequest, async ({ method, identity: verified, body }): Promise<ToolContextResponse> => {
    const tenant = reconcileIdentity(method, verified, body.identity).tenant;
    const context = await contextOf(deps, tenant, verified, body.server_id, body.tool_call_id);
    const trusted = (await deps.trust.ofTenant(tenant))(context.agent_id, context.server_id);
    return versioned({
      server_id: context.server_id,
      tool_call_id: context.tool_call_id,
      tool_name: context.tool,
      resource_uri: context.resource_uri,
      display_mode: context.display_mode,
      raw_html_trusted: trusted,
      context: {
        agent_id: context.agent_id,
        run: context.run,
        session: context.session,
        arguments: context.arguments,
        result: context.result,
        created_at: context.created_at,
        expires_at: context.expires_at,
      },
      ui: await uiOf(deps, context, trusted),
    });
  });
}

function appCallTool(deps: AppHandlerDeps): RpcHandler {
  return typedMethod(
    MCPAppCallToolRequest,
    async ({ method, identity: verified, body }): Promise<MCPAppCallToolResponse> => {
      const tenant = reconcileIdentity(method, verified, body.identity).tenant;
      const context = await contextOf(deps, tenant, verified, body.server_id, body.tool_call_id);
      const connection = await connectionOf(deps, context);
      const tool = connection.tools.find((t) => t.name === body.tool_name);
      if (tool === undefined) {
        throw new ServiceError('not_found', `MCP server ${body.server_id} lists no tool ${body.tool_name}`);
      }
      if (!callableByApp(tool)) {
        throw new ServiceError('scope_mismatch', `${body.server_id}/${body.tool_name} is not callable by an app`);
      }
      const base = {
        tool: `${body.server_id}__${body.tool_name}`.slice(0, 512),
        transport: connection.spec.transport,
        source: body.server_id,
        approval_requested: false,
        bytes_in: Buffer.byteLength(JSON.stringify(body.arguments)),
      };
      const record = (call: Omit<ToolCallRecord, keyof typeof base | 'at'>) =>
        deps
          .recordCall(tenant, { ...base, ...call, at: new Date().toISOString() })
          .catch((error: unknown) => deps.logger.warn({ err: error }, 'mcp app call not recorded in the metrics'));
      const invalid = deps.validators.checkFor(tool.inputSchema)(body.arguments);
      if (invalid !== undefined) {
        await record({ outcome: 'invalid_args', attempts: 0, duration_ms: 0, bytes_out: 0, artifacts_offloaded: 0 });
        throw new ServiceError('invalid_request', `${method}: arguments of ${body.tool_name}: ${invalid}`);
      }
      const started = performance.now();
      const ran = { attempts: 1, duration_ms: 0, bytes_out: 0, artifacts_offloaded: 0 };
      try {
        const reply = await connection.callTool({
          tool: body.tool_name,
          arguments: body.arguments,
          timeoutMs: deps.requestTimeoutMs,
          entry: { controller: new AbortController() },
        });
        const origin = { identity: quadOf(verified, context.run), serverId: body.server_id, label: body.tool_name };
        const forwarded = await deps.results.forward(reply, origin);
        const answer = {
          is_error: forwarded.is_error,
          content: forwarded.content,
          ...(forwarded.structured_content === undefined ? {} : { structured_content: forwarded.structured_content }),
        };
        await record({
          ...ran,
          outcome: forwarded.is_error ? 'failed' : 'completed',
          duration_ms: performance.now() - started,
          bytes_out: Buffer.byteLength(JSON.stringify(answer)),
          artifacts_offloaded: forwarded.offloaded?.length ?? 0,
        });
        return versioned(answer);
      } catch (error) {
        await record({ ...ran, outcome: 'failed', duration_ms: performance.now() - started });
        throw error;
      }
    },
  );
}

function setRawHtmlTrust(deps: AppHandlerDeps): RpcHandler {
  return typedMethod(
    MCPServerSetRawHTMLTrustRequest,
    async ({ method, identity: verified, body }): Promise<MCPServerSetRawHTMLTrustResponse> => {
      const tenant = reconcileIdentity(method, verified, body.identity).tenant;
      requireAdmin(method, verified);
      if (body.agent_id !== undefined) {
        await locateServer(deps.lookup, tenant, body.server_id, body.agent_id);
      } else if (!(await serversOfTenant(deps.lookup, tenant)).some((s) => s.spec.server_id === body.server_id)) {
        throw new ServiceError('not_found', `no agent of the tenant has an MCP server ${body.server_id}`);
      }
      const actor = quadOf({ ...verified, tenant });
      const { changed } = await deps.trust.set(tenant, body.agent_id, body.server_id, body.trusted, actor);
      if (changed) {
        const at = new Date().toISOString();
        await deps.publisher.publish({
          type: 'mcp.raw_html_trust_toggled',
          identity: actor,
          occurredAt: at,
          payload: { Actor: actor, ServerName: body.server_id, Trusted: body.trusted, OccurredAt: at },
        });
      }
      return versioned({
        server_id: body.server_id,
        ...(body.agent_id === undefined ? {} : { agent_id: body.agent_id }),
        trusted: body.trusted,
        changed,
      });
    },
  );
}

/** `mcp.apps.tool_context`, `mcp.apps.call_tool` and `mcp.servers.set_raw_html_trust`. */
export function createMcpAppHandlers(deps: AppHandlerDeps): Record<string, RpcHandler> {
  return {
    'mcp.apps.tool_context': toolContext(deps),
    'mcp.apps.call_tool': appCallTool(deps),
    'mcp.servers.set_raw_html_trust': setRawHtmlTrust(deps),
  };
}
