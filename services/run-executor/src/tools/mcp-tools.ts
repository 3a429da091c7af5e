import { randomBytes, randomUUID } from 'node:crypto';
import { MCP_CALL_TOOL, MCP_CANCEL_CALL, OAUTH_BEGIN, TOOLS_CATALOGUE } from '@ars/contracts';
import type { CatalogueTool, OAuthBeginReply, ToolsCatalogueReply, VerifiedIdentity } from '@ars/contracts';
import { callInternal, callInternalWithinBudget } from '@ars/bus';
import type { InternalCaller } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { ArgsValidators } from './json-schema-args.ts';
import { renderResult, toolErrorOfCall, toolErrorOfResult } from './mcp-output.ts';
import { ToolError } from './tool.ts';
import type { RetryPolicy, ToolContext, ToolDefinition, ToolOwner } from './tool.ts';

/**
 * An agent's MCP tools as the engine runs them. agent-registry hosts the MCP
 * connections: `_tools.catalogue` lists the tools a run of the agent may
 * call (with their JSON Schemas and the tenant's approval policies), and
 * each attempt of a call is one `_mcp.call_tool` with its own `call_id`. A
 * hard cancel (the attempt's signal) sends `_mcp.cancel_call` for that id,
 * best effort, and ends the attempt at once as `cancelled`.
 *
 * Retries: a read-only or idempotent tool is retried on a transient failure
 * or a timeout ({@link MCP_RETRY}); an unsafe one never is (a call that timed
 * out may have run).
 */

/** Retry policy of a read-only or idempotent MCP tool. */
export const MCP_RETRY: RetryPolicy = { maxAttempts: 3, backoffMs: 250 };
const NO_RETRY: RetryPolicy = { maxAttempts: 1, backoffMs: 0 };
const MAX_CALL_ID = 256;

export interface McpToolHost {
  /**
   * `_tools.catalogue` for the owner's run of `agentId`, asked again while
   * the host has no responders within the budget; its refusals and failures
   * are thrown as the RPC client's ServiceErrors.
   */
  catalogue(owner: ToolOwner, agentId: string): Promise<ToolsCatalogueReply>;
  /**
   * `_oauth.begin`: starts the authorization of an OAuth-bound server for the
   * owner's run, resumed by the pause `pauseToken` (asked again like the
   * catalogue while the host has no responders).
   */
  beginAuthorization(
    owner: ToolOwner,
    request: { readonly agentId: string; readonly run: string; readonly serverId: string; readonly pauseToken: string },
  ): Promise<OAuthBeginReply>;
  /** The catalogue's tools as tool definitions (approval as the catalogue lists it). */
  definitions(tools: readonly CatalogueTool[], agentId: string): ToolDefinition[];
}

/** Options of {@link createMcpToolHost}. */
export interface McpToolHostOptions {
  readonly rpc: InternalCaller;
  readonly logger: Logger;
  readonly validators: ArgsValidators;
  /** `timeout_ms` of each call: how long the host waits for the server (`MCP_CALL_TIMEOUT_MS`). */
  readonly callTimeoutMs: number;
  /**
   * The engine's RPC timeout (`ENGINE_RPC_TIMEOUT_MS`): the catalogue's
   * budget, a cancel's timeout, and how much longer than `callTimeoutMs` a
   * call waits for the host's answer (the host times the server out first).
   */
  readonly rpcTimeoutMs: number;
}

function identityOf(owner: ToolOwner): VerifiedIdentity {
  return { tenant: owner.tenant, user: owner.user, session: owner.session, scopes: [] };
}

/** A `call_id` unique to this attempt: the run, the planner's call id, the attempt, and a random part. */
export function attemptCallId(context: Pick<ToolContext, 'taskId' | 'callId' | 'attempt'>): string {
  const id = `${context.taskId}:${context.callId}:${context.attempt}:${randomBytes(4).toString('hex')}`;
  return id.length <= MAX_CALL_ID ? id : `${context.taskId.slice(0, 200)}:${context.attempt}:${randomUUID()}`;
}

/**
 * `call` unless `signal` aborts first: then `onAbort` runs and the result is
 * ToolError `cancelled` at once (the call's own outcome is ignored).
 */
function untilAborted<T>(call: Promise<T>, signal: AbortSignal, onAbort: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => {
      onAbort();
      reject(new ToolError('cancelled', 'aborted'));
    };
    signal.addEventListener('abort', abort, { once: true });
    call.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(toolErrorOfCall(error));
      },
    );
  });
}

export function createMcpToolHost(options: McpToolHostOptions): McpToolHost {
  const { rpc, logger, validators, callTimeoutMs, rpcTimeoutMs } = options;

  function cancel(owner: ToolOwner, callId: string, taskId: string): void {
    const body = { tenant: owner.tenant, user: owner.user, session: owner.session, call_id: callId };
    callInternal(rpc, MCP_CANCEL_CALL, identityOf(owner), body, { timeoutMs: rpcTimeoutMs }).then(
      ({ cancelled }) => logger.info({ taskId, callId, cancelled }, 'MCP tool call cancel sent'),
      (error: unknown) => logger.warn({ err: error, taskId, callId }, 'MCP tool call cancel failed'),
    );
  }

  async function call(tool: CatalogueTool, agentId: string, args: Record<string, unknown>, context: ToolContext) {
    if (context.signal.aborted) throw new ToolError('cancelled', 'aborted');
    const callId = attemptCallId(context);
    const { owner } = context;
    const request = callInternal(
      rpc,
      MCP_CALL_TOOL,
      identityOf(owner),
      {
        tenant: owner.tenant,
        user: owner.user,
        session: owner.session,
        agent_id: agentId,
        run: context.taskId,
        server_id: tool.server_id,
        tool: tool.server_tool,
        arguments: args,
        call_id: callId,
        timeout_ms: callTimeoutMs,
      },
      { timeoutMs: callTimeoutMs + rpcTimeoutMs },
    );
    const reply = await untilAborted(request, context.signal, () => cancel(owner, callId, context.taskId));
    // Stored parts are artifacts whatever the outcome: counted before an isError result throws.
    if (reply.offloaded !== undefined && reply.offloaded.length > 0) context.countOffloaded?.(reply.offloaded.length);
    if (reply.is_error) throw toolErrorOfResult(reply);
    return renderResult(reply);
  }

  return {
    catalogue: (owner, agentId) =>
      callInternalWithinBudget(
        rpc,
        TOOLS_CATALOGUE,
        identityOf(owner),
        { tenant: owner.tenant, user: owner.user, session: owner.session, agent_id: agentId },
        { timeoutMs: rpcTimeoutMs },
      ),
    beginAuthorization: (owner, request) =>
      callInternalWithinBudget(
        rpc,
        OAUTH_BEGIN,
        identityOf(owner),
        {
          tenant: owner.tenant,
          user: owner.user,
          session: owner.session,
          agent_id: request.agentId,
          run: request.run,
          server_id: request.serverId,
          pause_token: request.pauseToken,
        },
        { timeoutMs: rpcTimeoutMs },
      ),
    definitions: (tools, agentId) =>
      tools.map((tool): ToolDefinition => ({
        name: tool.name,
        description: tool.description,
        transport: tool.transport,
        source: tool.server_id,
        sideEffect: tool.side_effect,
        retry: tool.side_effect === 'unsafe' ? NO_RETRY : MCP_RETRY,
        approval: tool.approval_policy,
        tags: tool.tags,
        args: validators.argsFor(tool.server_id, tool.server_tool, tool.input_schema),
        parameters: tool.input_schema,
        run: (args, context) => call(tool, agentId, args, context),
      })),
  };
}
