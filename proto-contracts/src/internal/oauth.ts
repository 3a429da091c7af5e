import { z } from 'zod';
import { defineInternalEndpoint } from '../internal-def.ts';
import { AgentId } from '../schemas/agent-config.ts';
import { Timestamp } from '../schemas/common.ts';
import { UNKNOWN_AGENT } from './agent.ts';
import { tripleShape } from './shapes.ts';

/**
 * OAuth-bound MCP servers (MCP's authorization spec) between the run engine,
 * the tool host (agent-registry, which keeps the grants) and the gateway
 * (which serves the browser's redirect back):
 *
 * 1. `_tools.catalogue` lists a server whose grant is missing for the run's
 *    binding scope under `auth_required` (its tools are left out);
 *    `_mcp.call_tool` refuses `auth_required` when a grant is revoked or
 *    expires with no way to refresh it mid-run.
 * 2. The engine opens a pause (kind `auth`) and asks `_oauth.begin` with its
 *    pause token: the host starts an authorization-code flow with PKCE and
 *    answers the authorize URL and its `state`; the engine publishes
 *    `tool.auth_required`.
 * 3. The user's browser comes back to the gateway's `GET /v1/oauth/callback`
 *    with `state` and `code` (or `error`); the gateway asks `_oauth.complete`.
 *    The host exchanges the code, keeps the tokens sealed with governance's
 *    key (`_governance.seal_secret`), and delivers {@link AuthCompletionEnvelope}
 *    to the run's control inbox; the run publishes `tool.auth_completed` and
 *    asks the catalogue again.
 */

/** Who a grant belongs to: the whole tenant, one user of it, or one session. */
export const BindingScope = z.enum(['tenant', 'user', 'session']);
export type BindingScope = z.infer<typeof BindingScope>;

/** A server of a run's agent that needs the user to authorize before its tools can be listed or called. */
export const AuthRequiredServer = z.object({
  server_id: z.string(),
  provider_name: z.string().describe('the OAuth provider of the connection (event SourceName); the server id if none'),
  binding_scope: BindingScope,
  scopes: z.array(z.string()),
  reason: z.string().describe('no_grant | expired | revoked | refresh_failed'),
});
export type AuthRequiredServer = z.infer<typeof AuthRequiredServer>;

/** `_oauth.begin`: start the authorization of a server for a run's binding scope. */
export const OAuthBeginRequest = z.strictObject({
  ...tripleShape,
  agent_id: AgentId.optional(),
  run: z.string().min(1),
  server_id: z.string().min(1),
  pause_token: z.string().min(1).max(256).describe('the run pause that the completion resumes'),
});
export type OAuthBeginRequest = z.infer<typeof OAuthBeginRequest>;

export const OAuthBeginReply = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('authorize'),
    server_id: z.string(),
    provider_name: z.string(),
    binding_scope: BindingScope,
    binding_id: z.string(),
    authorize_url: z.string().describe('where the user authorizes (the authorization server, with PKCE and state)'),
    state: z.string().describe('the flow id the callback brings back; single use'),
    scopes: z.array(z.string()),
    expires_at: Timestamp.describe('the flow is refused after this (OAUTH_FLOW_TTL_SECONDS)'),
  }),
  z.object({
    status: z.literal('bound').describe('a usable grant exists now (another run completed it): call again'),
    server_id: z.string(),
    binding_id: z.string(),
  }),
]);
export type OAuthBeginReply = z.infer<typeof OAuthBeginReply>;

export const OAUTH_BEGIN = defineInternalEndpoint({
  name: '_oauth.begin',
  service: 'agent-registry',
  callers: ['run-executor'],
  gate: 'caller',
  request: OAuthBeginRequest,
  reply: OAuthBeginReply,
  refusals: {
    unknown_agent: UNKNOWN_AGENT,
    unknown_server: { code: 'invalid_request', retryable: false, summary: 'the agent has no such server' },
    not_oauth: {
      code: 'conflict',
      retryable: false,
      summary: 'the server is not OAuth-bound (no oauth_provider and no 401 with resource metadata)',
    },
    authorization_server_unavailable: {
      code: 'unavailable',
      retryable: true,
      summary: 'discovery or client registration at the authorization server failed',
    },
  },
  summary: "start the OAuth authorization of an MCP server for the owner's run",
});

/** `_oauth.complete`: what the authorization server sent back to the gateway's callback. */
export const OAuthCompleteRequest = z.strictObject({
  state: z.string().min(1).max(512),
  code: z.string().min(1).max(4096).optional(),
  error: z.string().min(1).max(256).optional().describe('the authorization server refused (RFC 6749 4.1.2.1)'),
  error_description: z.string().max(1024).optional(),
  iss: z
    .string()
    .min(1)
    .max(2048)
    .optional()
    .describe("the issuer of the authorization response (RFC 9207), checked against the flow's authorization server"),
});
export type OAuthCompleteRequest = z.infer<typeof OAuthCompleteRequest>;

export const OAuthCompleteReply = z.object({
  outcome: z.enum(['completed', 'denied']),
  server_id: z.string(),
  binding_id: z.string(),
  task_id: z.string().describe('the run that asked'),
  run_notified: z.boolean().describe("false: the run's inbox did not answer; its next claim finds the grant"),
});
export type OAuthCompleteReply = z.infer<typeof OAuthCompleteReply>;

export const OAUTH_COMPLETE = defineInternalEndpoint({
  name: '_oauth.complete',
  service: 'agent-registry',
  callers: ['gateway'],
  // The browser brings no token: the single-use, unguessable state is the capability.
  gate: 'service',
  request: OAuthCompleteRequest,
  reply: OAuthCompleteReply,
  refusals: {
    unknown_state: {
      code: 'not_found',
      retryable: false,
      summary: 'no flow has that state (never started, already completed, or expired)',
    },
    issuer_mismatch: {
      code: 'conflict',
      retryable: false,
      summary:
        "the response names another issuer than the flow's authorization server, or none where the server promises one (RFC 9207 mix-up defence)",
    },
    exchange_failed: {
      code: 'conflict',
      retryable: false,
      summary: 'the authorization server refused the code (invalid_grant, PKCE mismatch, …)',
    },
    authorization_server_unavailable: {
      code: 'unavailable',
      retryable: true,
      summary: 'the token endpoint did not answer',
    },
  },
  summary: 'complete an OAuth authorization-code flow from the callback',
});

/**
 * What the tool host sends to a run's control inbox when the flow a pause
 * waits for ended (not a steering control: it is never routed from the API).
 */
export const AuthCompletionEnvelope = z.strictObject({
  method: z.literal('auth_completed'),
  auth: z.strictObject({
    pause_token: z.string().min(1),
    state: z.string().min(1),
    server_id: z.string().min(1),
    binding_scope: BindingScope,
    outcome: z.enum(['completed', 'denied']),
    reason: z.string().max(1024).optional().describe('denied: the error the authorization server sent'),
  }),
  event_id: z.string().min(1).describe('idempotency of the delivery: oauth:<state>'),
});
export type AuthCompletionEnvelope = z.infer<typeof AuthCompletionEnvelope>;
