import { maxPayloadOf } from '@ars/bus';
import type { Bus, EventPublisher, RpcClient, RpcHandler } from '@ars/bus';
import type { ToolCallRecord } from '@ars/contracts';
import { createArtifactUploader, startPeriodic } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import type { Store } from '@ars/store';
import type { Logger } from '@ars/telemetry';
import type { AgentRegistryConfig } from '../config.ts';
import type { AgentServerDeps } from './agent-servers.ts';
import { createAppCalls } from './app-calls.ts';
import { createAppContextRepository } from './app-context.repository.ts';
import { createMcpAppHandlers } from './apps.handlers.ts';
import { createCallResults } from './call-results.ts';
import { createHtmlTrustRepository } from './html-trust.repository.ts';
import { createMcpInternalHandlers, listenForCancels, newReplicaId } from './internal.handlers.ts';
import type { OAuthGate } from './oauth-gate.ts';
import { createOffloader } from './offload.ts';
import { createConnectionPool } from './pool.ts';
import { createMcpServerHandlers } from './servers.handlers.ts';
import { createToolArgsValidators } from './tool-args.ts';
import { createToolHost } from './tool-host.ts';
import type { ToolHost } from './tool-host.ts';

/** Bytes of a reply kept free for its envelope when the bus bounds a result. */
const REPLY_ENVELOPE_BYTES = 16 * 1024;

/** The smallest stdio message bound, whatever MCP_RESULT_MAX_BYTES says. */
const MIN_STDIO_MESSAGE_BYTES = 16 * 1024 * 1024;

/** What a stdio message may carry beyond the largest result offloaded (its JSON-RPC envelope). */
const STDIO_ENVELOPE_BYTES = 1024 * 1024;

/** How often expired app contexts are deleted. */
const APP_CONTEXT_PRUNE_INTERVAL_MS = 600_000;

/** What the MCP host is built from. */
export interface McpHostDeps extends AgentServerDeps {
  readonly config: Readonly<AgentRegistryConfig>;
  readonly bus: Bus;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
  /** App contexts and raw HTML trust. */
  readonly store: Store;
  /** Writes offloaded results to the artifact service. */
  readonly rpc: RpcClient;
  /** Counts an app's tool call in the tool metrics. */
  readonly recordCall: (tenant: string, call: ToolCallRecord) => Promise<unknown>;
  /** Reaches OAuth-bound servers with the run's grant (agent-registry's `oauth/`); absent: none is. */
  readonly oauth?: OAuthGate;
}

/** The MCP host wired for the service. */
export interface McpHost {
  readonly toolHost: ToolHost;
  /** The public `mcp.servers.*` and `mcp.apps.*` methods it serves. */
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

/** Builds the connection pool, the tool host and their handlers (and the indexes of their collections). */
export async function createMcpHost(deps: McpHostDeps): Promise<McpHost> {
  const { config } = deps;
  const logger = deps.logger.child({ component: 'mcp' });
  const offloadMax = Math.max(config.MCP_OFFLOAD_MAX_BYTES, config.MCP_OFFLOAD_THRESHOLD_BYTES);
  const pool = createConnectionPool({
    settings: {
      connectTimeoutMs: config.MCP_CONNECT_TIMEOUT_MS,
      backoffMs: config.MCP_RESTART_BACKOFF_MS,
      backoffMaxMs: Math.max(config.MCP_RESTART_BACKOFF_MS, config.MCP_RESTART_BACKOFF_MAX_MS),
      stdioMaxMessageBytes: Math.max(
        4 * config.MCP_RESULT_MAX_BYTES,
        offloadMax + STDIO_ENVELOPE_BYTES,
        MIN_STDIO_MESSAGE_BYTES,
      ),
      // Results up to the offload cap reach the host; what it forwards is bounded after offloading.
      resultMaxBytes: () => offloadMax,
    },
    idleCloseMs: config.MCP_IDLE_CLOSE_SECONDS * 1_000,
    publisher: deps.publisher,
    logger,
  });
  const [contexts, trust] = await Promise.all([
    createAppContextRepository(deps.store),
    createHtmlTrustRepository(deps.store),
  ]);
  const offloader = createOffloader({
    settings: { thresholdBytes: config.MCP_OFFLOAD_THRESHOLD_BYTES, maxBytes: offloadMax },
    writer: createArtifactUploader({ bus: deps.bus, rpc: deps.rpc, timeoutMs: config.MCP_CONNECT_TIMEOUT_MS }),
    publisher: deps.publisher,
    logger,
  });
  const results = createCallResults({
    offloader,
    forwardBytes: () => resultBound(config.MCP_RESULT_MAX_BYTES, maxPayloadOf(deps.bus)),
  });
  const apps = createAppCalls({
    contexts,
    trust,
    publisher: deps.publisher,
    logger,
    ttlMs: config.MCP_APP_CONTEXT_TTL_SECONDS * 1_000,
  });
  const oauth = deps.oauth === undefined ? {} : { oauth: deps.oauth };
  const toolHost = createToolHost({ ...agentServerDeps(deps), pool, results, apps, ...oauth });
  // A revoked or expired grant closes the connections that carry it.
  deps.oauth?.onBindingClosed((bindingId) => {
    pool.closeBinding(bindingId).catch((error: unknown) => logger.warn({ err: error }, 'mcp binding close failed'));
  });
  const replica = newReplicaId();
  const cancels = listenForCancels(toolHost, deps.bus, replica);
  const pruner = startPeriodic(
    async () => {
      const deleted = await contexts.prune();
      if (deleted > 0) logger.info({ deleted }, 'expired mcp app contexts deleted');
    },
    { name: 'mcp-app-context-pruner', intervalMs: APP_CONTEXT_PRUNE_INTERVAL_MS, logger, runAtStart: true },
  );
  const lookup = agentServerDeps(deps);
  const requestTimeoutMs = config.MCP_CONNECT_TIMEOUT_MS;
  return {
    toolHost,
    handlers: {
      ...createMcpServerHandlers({ lookup, pool, requestTimeoutMs, trust, offloader, ...oauth }),
      ...createMcpAppHandlers({
        lookup,
        host: toolHost,
        contexts,
        trust,
        results,
        validators: createToolArgsValidators(),
        publisher: deps.publisher,
        logger,
        recordCall: (tenant, call) => deps.recordCall(tenant, call),
        requestTimeoutMs,
      }),
    },
    internalHandlers: createMcpInternalHandlers(toolHost, deps.bus, replica),
    stop: async () => {
      cancels.unsubscribe();
      await pruner.stop();
      await toolHost.close();
    },
  };
}

function agentServerDeps(deps: McpHostDeps): AgentServerDeps {
  const { revisions, retirements, defaultAgentId, variants, sessionSettings } = deps;
  return { revisions, retirements, defaultAgentId, variants, sessionSettings };
}
