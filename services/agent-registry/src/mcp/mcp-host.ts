import { maxPayloadOf } from '@ars/bus';
import type { Bus, EventPublisher, RpcHandler } from '@ars/bus';
import type { InternalHandler } from '@ars/service-kit';
import type { Logger } from '@ars/telemetry';
import type { AgentRegistryConfig } from '../config.ts';
import type { AgentServerDeps } from './agent-servers.ts';
import { createMcpInternalHandlers, listenForCancels, newReplicaId } from './internal.handlers.ts';
import { createConnectionPool } from './pool.ts';
import { createMcpServerHandlers } from './servers.handlers.ts';
import { createToolHost } from './tool-host.ts';
import type { ToolHost } from './tool-host.ts';

/** Bytes of a reply kept free for its envelope when the bus bounds a result. */
const REPLY_ENVELOPE_BYTES = 16 * 1024;

/** The smallest stdio message bound, whatever MCP_RESULT_MAX_BYTES says. */
const MIN_STDIO_MESSAGE_BYTES = 16 * 1024 * 1024;

/** What the MCP host is built from. */
export interface McpHostDeps extends AgentServerDeps {
  readonly config: Readonly<AgentRegistryConfig>;
  readonly bus: Bus;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
}

/** The MCP host wired for the service. */
export interface McpHost {
  readonly toolHost: ToolHost;
  /** The public `mcp.servers.*` methods it serves. */
  readonly handlers: Record<string, RpcHandler>;
  /** `_mcp.call_tool` and `_mcp.cancel_call`. */
  readonly internalHandlers: InternalHandler[];
  /** Closes every connection (stdio servers killed). */
  stop(): Promise<void>;
}

/**
 * The largest result forwarded: MCP_RESULT_MAX_BYTES, and no more than one
 * reply on the bus carries (its max_payload less the envelope).
 */
export function resultBound(configured: number, busMaxPayload: number | undefined): number {
  if (busMaxPayload === undefined) return configured;
  return Math.max(1, Math.min(configured, busMaxPayload - REPLY_ENVELOPE_BYTES));
}

/** Builds the connection pool, the tool host and their handlers. */
export function createMcpHost(deps: McpHostDeps): McpHost {
  const { config } = deps;
  const pool = createConnectionPool({
    settings: {
      connectTimeoutMs: config.MCP_CONNECT_TIMEOUT_MS,
      backoffMs: config.MCP_RESTART_BACKOFF_MS,
      backoffMaxMs: Math.max(config.MCP_RESTART_BACKOFF_MS, config.MCP_RESTART_BACKOFF_MAX_MS),
      stdioMaxMessageBytes: Math.max(4 * config.MCP_RESULT_MAX_BYTES, MIN_STDIO_MESSAGE_BYTES),
      resultMaxBytes: () => resultBound(config.MCP_RESULT_MAX_BYTES, maxPayloadOf(deps.bus)),
    },
    idleCloseMs: config.MCP_IDLE_CLOSE_SECONDS * 1_000,
    publisher: deps.publisher,
    logger: deps.logger.child({ component: 'mcp' }),
  });
  const toolHost = createToolHost({ ...agentServerDeps(deps), pool });
  const replica = newReplicaId();
  const cancels = listenForCancels(toolHost, deps.bus, replica);
  return {
    toolHost,
    handlers: createMcpServerHandlers({
      lookup: agentServerDeps(deps),
      pool,
      requestTimeoutMs: config.MCP_CONNECT_TIMEOUT_MS,
    }),
    internalHandlers: createMcpInternalHandlers(toolHost, deps.bus, replica),
    stop: () => {
      cancels.unsubscribe();
      return toolHost.close();
    },
  };
}

function agentServerDeps(deps: McpHostDeps): AgentServerDeps {
  const { revisions, retirements, defaultAgentId, variants, sessionSettings } = deps;
  return { revisions, retirements, defaultAgentId, variants, sessionSettings };
}
