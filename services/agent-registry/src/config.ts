import { z } from 'zod';
import { BaseServiceConfig, CREDENTIAL_BROKER_CONFIG_SHAPE } from '@ars/service-kit';

/** The agent-registry service's environment: the base variables plus its own. */
export const AgentRegistryConfig = BaseServiceConfig.extend({
  DEFAULT_AGENT_ID: z
    .string()
    .min(1)
    .max(128)
    .default('default')
    .describe(
      'The runtime\'s configured default agent: `_agent.resolve` always accepts it, with the built-in configuration while no revision exists. Must equal the run-executor\'s DEFAULT_AGENT_ID. Default "default".',
    ),
  MCP_IDLE_CLOSE_SECONDS: z.coerce
    .number()
    .min(0)
    .max(86_400)
    .default(600)
    .describe(
      'Seconds an MCP connection (one per tenant, agent, connection definition and server on this replica) stays open without a call, a discovery or a read; then it is closed (a stdio server is killed) and the next use opens it again. 0 keeps connections open until shutdown. Default 600.',
    ),
  MCP_RESULT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(256 * 1024 * 1024)
    .default(4 * 1024 * 1024)
    .describe(
      "Largest MCP tool result, in bytes of JSON, the host forwards; a larger one is refused `result_too_large`. The bus's max_payload (less 16 KiB for the reply envelope) caps it too. A stdio server's single message may reach four times this (at least 16 MiB) before the host drops the connection as broken. Default 4194304 (4 MiB).",
    ),
  MCP_CONNECT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(300_000)
    .default(10_000)
    .describe(
      'Milliseconds an MCP connection may take to open: spawn or HTTP connect, the initialize handshake and the first discovery (tools, prompts, resources); past it the connection counts as failed. Default 10000.',
    ),
  MCP_RESTART_BACKOFF_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(600_000)
    .default(500)
    .describe(
      'Milliseconds before the first reconnect of an MCP connection that broke (a stdio server that exited, an HTTP server gone); each failed attempt doubles it, up to MCP_RESTART_BACKOFF_MAX_MS. Default 500.',
    ),
  MCP_RESTART_BACKOFF_MAX_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(3_600_000)
    .default(30_000)
    .describe('Longest pause between two reconnect attempts of a broken MCP connection, in ms. Default 30000.'),
  MCP_OFFLOAD_THRESHOLD_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(1024 * 1024)
    .default(64 * 1024)
    .describe(
      "A tool result (`_mcp.call_tool`, `mcp.apps.call_tool`) or a resource read larger than this, in bytes of JSON, has its largest parts stored as artifacts of the caller's session and replaced by `resource_link` blocks (`artifact://<id>`), until it is no larger (`mcp.resource_offloaded` each). Default 65536 (64 KiB).",
    ),
  MCP_OFFLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(64 * 1024 * 1024)
    .default(32 * 1024 * 1024)
    .describe(
      'Largest MCP result or resource read, in bytes of JSON, the host offloads to artifacts; a larger one is refused `result_too_large` before anything is stored (a stdio server may write messages this large, plus 1 MiB). Default 33554432 (32 MiB).',
    ),
  MCP_APP_CONTEXT_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(86_400)
    .describe(
      'Seconds the context of an MCP app tool call (arguments, result, UI resource) is kept for `mcp.apps.tool_context` and `mcp.apps.call_tool`. Default 86400 (24 h).',
    ),
  TOOL_METRICS_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3_650)
    .default(30)
    .describe(
      'Days the per-minute tool call counters (`tools.metrics`, `tools.content_stats`) are kept; older minutes are deleted hourly and at boot. Default 30.',
    ),
  OAUTH_REDIRECT_BASE_URL: z
    .url()
    .default('http://127.0.0.1:8080')
    .describe(
      "The gateway's public base URL as the user's browser reaches it: OAuth authorizations of MCP servers redirect to `<it>/v1/oauth/callback`, which must be registered with the authorization server. Default http://127.0.0.1:8080 (a local gateway on its default port).",
    ),
  OAUTH_FLOW_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(30)
    .max(86_400)
    .default(600)
    .describe(
      'Seconds a started OAuth authorization (`_oauth.begin`) waits for the callback; a later callback is refused `unknown_state`. Default 600.',
    ),
  OAUTH_REFRESH_MARGIN_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3_600)
    .default(60)
    .describe(
      'An OAuth grant whose access token expires within this many seconds is refreshed (with its refresh token) before its next use. Default 60.',
    ),
  OAUTH_HTTP_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(120_000)
    .default(10_000)
    .describe(
      'Milliseconds one request to an authorization server (discovery, registration, token, revocation) may take. Default 10000.',
    ),
  FLEET_HEALTH_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(3_600_000)
    .default(30_000)
    .describe(
      'Milliseconds between two fleet health passes: each asks the run-executor once for the runs ended in the last interval and reports `agent.health` for every agent that had any. Default 30000.',
    ),
  FLEET_DEPENDENCY_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(60_000)
    .default(5_000)
    .describe(
      'Milliseconds an agents.* read or control waits for the run-executor, memory or governance (asked again while they do not answer); then 503 `unavailable`. Default 5000.',
    ),
  // OAuth providers whose credential_broker is an http(s) URL: their tokens come from that broker.
  ...CREDENTIAL_BROKER_CONFIG_SHAPE,
});
export type AgentRegistryConfig = z.infer<typeof AgentRegistryConfig>;
