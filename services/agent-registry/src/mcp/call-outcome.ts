import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isServiceError, MCP_CALL_TOOL, refuse } from '@ars/contracts';
import type { McpCallToolReply, RefusalReason, ServiceError } from '@ars/contracts';

/**
 * What a failed MCP request means for `_mcp.call_tool`:
 *
 * | failure | refusal | connection |
 * |---|---|---|
 * | cancelled by `_mcp.cancel_call` | `call_cancelled` | kept |
 * | the SDK's request timeout | `call_timeout` | kept |
 * | the connection closed mid-call (a stdio server exited) | `server_unavailable` | restarted |
 * | HTTP transport failure (refused, reset, 5xx, lost session) | `server_unavailable` | restarted |
 * | a JSON-RPC error answer, or a result that is not a CallToolResult | `protocol_error` | kept |
 * | a line that is not JSON-RPC on stdio (calls then in flight) | `protocol_error` | restarted |
 */

/** Why the host aborted a call itself (checked before the SDK's error, which cannot tell). */
export type AbortCause = 'cancelled' | 'protocol_error';

/** A refusal, and whether the connection is broken and must be reopened. */
export interface ClassifiedFailure {
  readonly error: ServiceError;
  readonly broken: boolean;
}

function isNetworkFailure(error: unknown): boolean {
  if (error instanceof StreamableHTTPError || error instanceof SseError) return true;
  // undici: `TypeError: fetch failed` with the socket error as cause.
  return error instanceof TypeError && /fetch failed|terminated|socket/i.test(error.message);
}

function isMalformed(error: unknown): boolean {
  return error instanceof Error && (/ZodError$/.test(error.name) || error instanceof SyntaxError);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The refusal for `error`, thrown by a call of `tool` on `serverId` that the
 * host aborted for `aborted` (if it did). Anything the table does not name
 * is returned as is (a bug: the service answers `internal`).
 */
export function classifyCallFailure(
  error: unknown,
  where: { readonly serverId: string; readonly tool: string; readonly aborted?: AbortCause | undefined },
): ClassifiedFailure | { readonly error: unknown; readonly broken: false } {
  const { serverId, tool, aborted } = where;
  const of = (reason: RefusalReason<typeof MCP_CALL_TOOL>, message: string, broken = false) => ({
    error: refuse(MCP_CALL_TOOL, reason, `${serverId}/${tool}: ${message}`, { cause: error }),
    broken,
  });
  if (aborted === 'cancelled') return of('call_cancelled', 'the call was cancelled');
  if (aborted === 'protocol_error') return of('protocol_error', 'the server wrote a message that is not JSON-RPC');
  if (isServiceError(error)) return { error, broken: false };
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) return of('call_timeout', 'the server did not answer in time');
    if (error.code === ErrorCode.ConnectionClosed)
      return of('server_unavailable', 'the connection closed mid-call', true);
    return of('protocol_error', `the server answered JSON-RPC error ${error.code}: ${error.message}`);
  }
  if (isNetworkFailure(error)) return of('server_unavailable', `transport failure: ${describe(error)}`, true);
  if (isMalformed(error)) return of('protocol_error', `malformed result: ${describe(error)}`);
  return { error, broken: false };
}

/**
 * The reply of a call whose server answered `result` after `serverMs`:
 * refused `result_too_large` past `limit` bytes of JSON; `isError` is an
 * answer (`is_error: true`), not a refusal.
 */
export function callReply(
  where: { readonly serverId: string; readonly tool: string },
  result: Record<string, unknown>,
  serverMs: number,
  limit: number,
): McpCallToolReply {
  const bytes = Buffer.byteLength(JSON.stringify(result));
  if (bytes > limit) {
    const message = `${where.serverId}/${where.tool}: result of ${bytes} bytes (at most ${limit})`;
    throw refuse(MCP_CALL_TOOL, 'result_too_large', message);
  }
  const structured = result.structuredContent;
  return {
    content: (result.content ?? []) as McpCallToolReply['content'],
    ...(structured !== null && typeof structured === 'object' && !Array.isArray(structured)
      ? { structured_content: structured as Record<string, unknown> }
      : {}),
    is_error: result.isError === true,
    bytes_out: bytes,
    server_ms: serverMs,
  };
}
