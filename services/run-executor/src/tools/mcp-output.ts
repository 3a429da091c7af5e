import { isServiceError, MCP_CALL_TOOL, refusalOf } from '@ars/contracts';
import type { McpCallToolReply, RefusalReason } from '@ars/contracts';
import { ToolError } from './tool.ts';
import type { ToolErrorClass } from './tool.ts';

/**
 * What an MCP tool call becomes for the planner: the result's content as
 * text (text blocks joined; images, audio and binary resources summarised by
 * type, MIME type and size, never their base64 in the prompt), and a failed
 * call as a {@link ToolError} of the class its retry depends on.
 */

/** Longest error text of a failed call kept (`tool.failed` ErrorMessage, the planner's error message), in characters. */
export const MCP_ERROR_MAX_CHARS = 4_096;

/** Bytes that a base64 text decodes to. */
export function base64Bytes(data: string): number {
  const trimmed = data.replace(/\s/g, '');
  const padding = trimmed.endsWith('==') ? 2 : trimmed.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((trimmed.length * 3) / 4) - padding);
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** `[type mime, N bytes]` with whichever parts are known. */
function summary(type: string, mime: string | undefined, bytes: number | undefined, name?: string): string {
  const parts = [name, mime, bytes === undefined ? undefined : `${bytes} bytes`].filter((p) => p !== undefined);
  return parts.length === 0 ? `[${type}]` : `[${type}: ${parts.join(', ')}]`;
}

/** One content block as the planner sees it. */
export function renderBlock(block: Readonly<Record<string, unknown>>): string {
  const type = str(block.type) ?? 'unknown';
  const mime = str(block.mimeType);
  switch (type) {
    case 'text':
      return str(block.text) ?? '';
    case 'image':
    case 'audio': {
      const data = str(block.data);
      return summary(type, mime, data === undefined ? undefined : base64Bytes(data));
    }
    case 'resource_link': {
      const size = typeof block.size === 'number' ? block.size : undefined;
      // A link's description says what it holds: how to read an offloaded part (artifact_read), for one.
      const description = str(block.description)?.slice(0, 512);
      const link = summary(type, mime, size, str(block.uri));
      return description === undefined || description === '' ? link : `${link} ${description}`;
    }
    case 'resource': {
      const resource = (typeof block.resource === 'object' && block.resource !== null ? block.resource : {}) as Record<
        string,
        unknown
      >;
      const uri = str(resource.uri);
      const text = str(resource.text);
      const rmime = str(resource.mimeType);
      if (text !== undefined) return `${summary(type, rmime, undefined, uri)}\n${text}`;
      const blob = str(resource.blob);
      return summary(type, rmime, blob === undefined ? undefined : base64Bytes(blob), uri);
    }
    default:
      return summary(type, mime, undefined);
  }
}

/** The result as the planner sees it: its content blocks rendered and joined, else its structured content as JSON. */
export function renderResult(reply: Pick<McpCallToolReply, 'content' | 'structured_content'>): string {
  if (reply.content.length > 0) return reply.content.map(renderBlock).join('\n');
  if (reply.structured_content !== undefined) return JSON.stringify(reply.structured_content);
  return '';
}

function clip(text: string): string {
  return text.length > MCP_ERROR_MAX_CHARS ? `${text.slice(0, MCP_ERROR_MAX_CHARS)}…` : text;
}

/** A result the server flagged `isError`: the call ran and failed, and is not retried. */
export function toolErrorOfResult(reply: Pick<McpCallToolReply, 'content' | 'structured_content'>): ToolError {
  const text = renderResult(reply).trim();
  return new ToolError('permanent', clip(text === '' ? 'the tool reported an error' : text));
}

/** The error class of each refusal of `_mcp.call_tool`. */
const REFUSAL_CLASSES: Readonly<Record<RefusalReason<typeof MCP_CALL_TOOL>, ToolErrorClass>> = {
  server_unavailable: 'transient',
  call_timeout: 'timeout',
  unknown_tool: 'permanent',
  unknown_agent: 'permanent',
  protocol_error: 'permanent',
  result_too_large: 'permanent',
  auth_required: 'permanent',
  offload_failed: 'transient',
  call_cancelled: 'cancelled',
};

/**
 * True when `error` is `_mcp.call_tool` refusing `auth_required`: the
 * server's grant for the run's binding scope was revoked or expired with no
 * way to refresh it. The host refused before the server ran anything, so the
 * engine waits for the user to authorize again and makes the call once more
 * (see `auth-wait.ts`); a second refusal stays a permanent failure.
 */
export function isAuthRequired(error: unknown): boolean {
  return error instanceof ToolError && refusalOf(MCP_CALL_TOOL, error.cause) === 'auth_required';
}

/**
 * A failed `_mcp.call_tool` as a ToolError: its refusal's class (above), else
 * the host not answering (`unavailable`) is transient and its RPC timing out
 * a timeout; anything else is permanent. The message names the reason.
 */
export function toolErrorOfCall(error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  if (!isServiceError(error)) {
    return new ToolError('permanent', clip(error instanceof Error ? error.message : String(error)), { cause: error });
  }
  const reason = refusalOf(MCP_CALL_TOOL, error);
  if (reason !== undefined) {
    const errorClass = REFUSAL_CLASSES[reason];
    return new ToolError(errorClass, clip(`${reason}: ${error.message}`), { cause: error });
  }
  const errorClass: ToolErrorClass =
    error.code === 'unavailable' ? 'transient' : error.code === 'timeout' ? 'timeout' : 'permanent';
  return new ToolError(errorClass, clip(`${error.code}: ${error.message}`), { cause: error });
}
