import { MCP_CALL_TOOL, refuse } from '@ars/contracts';
import type { McpCallToolReply } from '@ars/contracts';
import { OffloadRefusal } from './offload.ts';
import type { Offloader, OffloadOrigin } from './offload.ts';

/**
 * A tool call's reply on its way out (`_mcp.call_tool`, `mcp.apps.call_tool`):
 * the connection bounds what it accepts by MCP_OFFLOAD_MAX_BYTES; here the
 * result is offloaded (its large parts stored as artifacts, see
 * `offload.ts`), then what is left must fit the forward bound
 * (MCP_RESULT_MAX_BYTES and the bus's max_payload less the envelope), else
 * `result_too_large`. A failed store is `offload_failed` (retryable).
 */
export interface CallResults {
  forward(reply: McpCallToolReply, origin: OffloadOrigin): Promise<McpCallToolReply>;
}

/** What the pipeline uses. */
export interface CallResultsDeps {
  readonly offloader: Offloader;
  /** The largest reply forwarded, in bytes of JSON (read per call: it depends on the bus). */
  readonly forwardBytes: () => number;
}

export function createCallResults(deps: CallResultsDeps): CallResults {
  return {
    async forward(reply, origin) {
      const where = `${origin.serverId}/${origin.label}`;
      const raw: Record<string, unknown> = {
        content: reply.content,
        ...(reply.structured_content === undefined ? {} : { structuredContent: reply.structured_content }),
        isError: reply.is_error,
      };
      let offloaded;
      try {
        offloaded = await deps.offloader.toolResult(raw, origin);
      } catch (error) {
        if (!(error instanceof OffloadRefusal)) throw error;
        const reason = error.kind === 'too_large' ? 'result_too_large' : 'offload_failed';
        throw refuse(MCP_CALL_TOOL, reason, error.message, { cause: error.cause });
      }
      const { result, offloaded: parts } = offloaded;
      const structured = result.structuredContent as Record<string, unknown> | undefined;
      const forwarded: McpCallToolReply = {
        content: result.content as McpCallToolReply['content'],
        ...(structured === undefined ? {} : { structured_content: structured }),
        is_error: reply.is_error,
        bytes_out: reply.bytes_out,
        server_ms: reply.server_ms,
        ...(parts.length === 0 ? {} : { offloaded: parts }),
      };
      const bytes = Buffer.byteLength(JSON.stringify(forwarded));
      const limit = deps.forwardBytes();
      if (bytes > limit) {
        throw refuse(
          MCP_CALL_TOOL,
          'result_too_large',
          `${where}: reply of ${bytes} bytes after offloading (at most ${limit})`,
        );
      }
      return forwarded;
    },
  };
}
