import { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';

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
});
export type AgentRegistryConfig = z.infer<typeof AgentRegistryConfig>;
