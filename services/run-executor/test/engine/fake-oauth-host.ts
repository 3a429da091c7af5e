import { MCP_CALL_TOOL, OAUTH_BEGIN, refuse, TOOLS_CATALOGUE, TOOLS_RECORD_CALLS } from '@ars/contracts';
import type {
  AuthCompletionEnvelope,
  CatalogueTool,
  McpCallToolRequest,
  OAuthBeginRequest,
  ToolsCatalogueRequest,
} from '@ars/contracts';
import { requestControl, serveService } from '@ars/bus';
import type { Bus, ControlInboxReply, ServedService } from '@ars/bus';
import { buildInternalTable, serveInternal } from '@ars/service-kit';
import { createLogger } from '@ars/telemetry';

/**
 * A tool host (agent-registry's `_tools.catalogue`, `_oauth.begin`,
 * `_mcp.call_tool` and `_tools.record_calls`) with one OAuth-bound server,
 * `kb` (provider `github`, binding scope `user`), whose grants it keeps per
 * tenant and user. Without a grant the catalogue lists `kb` under
 * `auth_required` and calls are refused `auth_required`; {@link FakeOAuthHost.complete}
 * plays the gateway's callback: it grants (or not) and delivers the
 * completion envelope to the run's inbox, as the real host does.
 */

export const KB_SCOPES = ['repo', 'read:user'];

/** One flow `_oauth.begin` started. */
export interface BegunFlow {
  readonly request: OAuthBeginRequest;
  readonly state: string;
}

export interface FakeOAuthHost {
  readonly served: ServedService;
  readonly catalogueCalls: ToolsCatalogueRequest[];
  readonly begins: BegunFlow[];
  readonly calls: McpCallToolRequest[];
  /** How long a flow lives after `_oauth.begin`, in ms (default 10 minutes). */
  flowTtlMs: number;
  /** `_oauth.begin` grants, then answers `bound` (another run completed a flow meanwhile). */
  bindOnBegin: boolean;
  /** Revokes the user's grant as its next call arrives (that call is refused `auth_required`). */
  revokeAtNextCall(tenant: string, user: string): void;
  /** Gives the tenant's user a grant of `kb` (another run, or the browser, completed a flow). */
  grant(tenant: string, user: string): void;
  /** Takes it away (revoked; the next call is refused `auth_required`). */
  revoke(tenant: string, user: string): void;
  /** The last flow begun for `run`. */
  flowOf(run: string): BegunFlow | undefined;
  /** The completion envelope of the run's last flow, granting first when `completed` (nothing is delivered). */
  envelope(run: string, outcome: 'completed' | 'denied', reason?: string): AuthCompletionEnvelope;
  /** Grants (when `completed`) and delivers the completion of the run's last flow to its inbox. */
  complete(run: string, outcome: 'completed' | 'denied', reason?: string): Promise<ControlInboxReply>;
  /** Delivers an envelope to the run's inbox as the host does. */
  deliver(run: string, envelope: AuthCompletionEnvelope): Promise<ControlInboxReply>;
}

function kbTool(tool: string): CatalogueTool {
  return {
    name: `kb__${tool}`,
    server_id: 'kb',
    server_tool: tool,
    transport: 'streamable_http',
    description: `the kb server's ${tool}`,
    input_schema: { type: 'object' },
    side_effect: tool === 'post' ? 'unsafe' : 'read_only',
    approval_policy: { mode: 'never', on_timeout: 'reject' },
    tags: ['mcp'],
  };
}

export async function serveOAuthHost(bus: Bus): Promise<FakeOAuthHost> {
  const grants = new Set<string>();
  const revoking = new Set<string>();
  const keyOf = (tenant: string, user: string) => `${tenant}/${user}`;
  const catalogueCalls: ToolsCatalogueRequest[] = [];
  const begins: BegunFlow[] = [];
  const calls: McpCallToolRequest[] = [];
  const reply = (text: string) => ({ content: [{ type: 'text', text }], is_error: false, bytes_out: 10, server_ms: 1 });
  const handlers = buildInternalTable('agent-registry', [
    serveInternal(TOOLS_CATALOGUE, async ({ body }) => {
      catalogueCalls.push(body);
      const granted = grants.has(keyOf(body.tenant, body.user));
      return {
        tools: granted ? ['search', 'post', 'locked'].map(kbTool) : [],
        approval_policies: {},
        unavailable_servers: [],
        auth_required: granted
          ? []
          : [
              {
                server_id: 'kb',
                provider_name: 'github',
                binding_scope: 'user' as const,
                scopes: KB_SCOPES,
                reason: 'no_grant',
              },
            ],
      };
    }),
    serveInternal(OAUTH_BEGIN, async ({ body }) => {
      if (host.bindOnBegin) grants.add(keyOf(body.tenant, body.user));
      if (grants.has(keyOf(body.tenant, body.user))) {
        return { status: 'bound' as const, server_id: body.server_id, binding_id: 'b1' };
      }
      const state = `st-${begins.length + 1}-${body.run.slice(-6)}`;
      begins.push({ request: body, state });
      return {
        status: 'authorize' as const,
        server_id: body.server_id,
        provider_name: 'github',
        binding_scope: 'user' as const,
        binding_id: 'b1',
        authorize_url: `https://github.example/login/oauth/authorize?state=${state}`,
        state,
        scopes: KB_SCOPES,
        expires_at: new Date(Date.now() + host.flowTtlMs).toISOString(),
      };
    }),
    serveInternal(MCP_CALL_TOOL, async ({ body }) => {
      calls.push(body);
      // `locked` loses the grant at each call (a server whose authorization never sticks).
      if (revoking.delete(keyOf(body.tenant, body.user)) || body.tool === 'locked') {
        grants.delete(keyOf(body.tenant, body.user));
      }
      if (!grants.has(keyOf(body.tenant, body.user))) {
        throw refuse(MCP_CALL_TOOL, 'auth_required', 'the grant of kb was revoked');
      }
      return reply(`${body.tool} done`);
    }),
    serveInternal(TOOLS_RECORD_CALLS, async ({ body }) => ({ recorded: body.calls.length })),
  ]);
  const served = await serveService(bus, {
    service: 'agent-registry',
    version: '0.0.1',
    instanceId: 'fake-oauth-host',
    handlers,
    logger: createLogger({ name: 'fakes', level: 'silent' }),
  });
  const flowOf = (run: string) => begins.findLast((flow) => flow.request.run === run);
  const envelope = (run: string, outcome: 'completed' | 'denied', reason?: string): AuthCompletionEnvelope => {
    const flow = flowOf(run);
    if (flow === undefined) throw new Error(`no flow was begun for ${run}`);
    if (outcome === 'completed') grants.add(keyOf(flow.request.tenant, flow.request.user));
    return {
      method: 'auth_completed',
      auth: {
        pause_token: flow.request.pause_token,
        state: flow.state,
        server_id: flow.request.server_id,
        binding_scope: 'user',
        outcome,
        ...(reason === undefined ? {} : { reason }),
      },
      event_id: `oauth:${flow.state}`,
    };
  };
  const deliver = (run: string, body: AuthCompletionEnvelope) => requestControl(bus, run, body, { timeoutMs: 2_000 });
  const host: FakeOAuthHost = {
    served,
    catalogueCalls,
    begins,
    calls,
    flowTtlMs: 600_000,
    bindOnBegin: false,
    revokeAtNextCall: (tenant, user) => void revoking.add(keyOf(tenant, user)),
    grant: (tenant, user) => void grants.add(keyOf(tenant, user)),
    revoke: (tenant, user) => void grants.delete(keyOf(tenant, user)),
    flowOf,
    envelope,
    deliver,
    complete: (run, outcome, reason) => deliver(run, envelope(run, outcome, reason)),
  };
  return host;
}
