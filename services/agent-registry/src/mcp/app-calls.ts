import type { EventPublisher } from '@ars/bus';
import type { IdentityQuad, McpCallToolReply } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import type { AppContextRepository } from './app-context.repository.ts';
import { appMetaOf } from './apps.ts';
import type { ListedAppTool } from './apps.ts';
import type { HtmlTrustRepository } from './html-trust.repository.ts';

/**
 * What happens after a run called an app tool (a tool with a `ui://`
 * resource): its context (who, the arguments, the result, the resource and
 * display mode) is recorded for `MCP_APP_CONTEXT_TTL_SECONDS`, then
 * `mcp.app_available` is published to the run's identity with whether the
 * server's raw HTML is trusted. Best effort: a failure is logged, and the
 * run's call is answered all the same (without the event, since the
 * context it announces could not be read).
 */

/** One answered call of a run. */
export interface AnsweredCall {
  readonly identity: IdentityQuad;
  readonly agentId: string;
  readonly serverId: string;
  readonly tool: ListedAppTool;
  readonly callId: string;
  readonly arguments: Record<string, unknown>;
  readonly reply: McpCallToolReply;
}

export interface AppCalls {
  /** Records an app tool's call and announces it; does nothing for another tool. Never throws. */
  answered(call: AnsweredCall): Promise<void>;
}

/** What recording reads and writes. */
export interface AppCallsDeps {
  readonly contexts: AppContextRepository;
  readonly trust: HtmlTrustRepository;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
  /** How long a context is kept, in ms. */
  readonly ttlMs: number;
}

export function createAppCalls(deps: AppCallsDeps): AppCalls {
  return {
    async answered(call) {
      const meta = appMetaOf(call.tool);
      if (meta.resourceUri === undefined) return;
      const { identity, reply } = call;
      const now = new Date();
      try {
        await deps.contexts.put({
          tenant: identity.tenant,
          user: identity.user,
          session: identity.session,
          run: identity.run,
          agent_id: call.agentId,
          server_id: call.serverId,
          tool: call.tool.name,
          tool_call_id: call.callId,
          arguments: call.arguments,
          result: {
            content: reply.content,
            ...(reply.structured_content === undefined ? {} : { structured_content: reply.structured_content }),
            is_error: reply.is_error,
          },
          resource_uri: meta.resourceUri,
          display_mode: meta.displayMode,
          created_at: now.toISOString(),
          expires_at: new Date(now.getTime() + deps.ttlMs).toISOString(),
        });
        const trusted = (await deps.trust.ofTenant(identity.tenant))(call.agentId, call.serverId);
        const at = new Date().toISOString();
        await deps.publisher.publish({
          type: 'mcp.app_available',
          identity,
          occurredAt: at,
          payload: {
            Identity: identity,
            ServerID: call.serverId,
            ToolCallID: call.callId,
            ToolName: call.tool.name,
            ResourceURI: meta.resourceUri,
            DisplayMode: meta.displayMode,
            RawHTMLTrusted: trusted,
            OccurredAt: at,
          },
        });
      } catch (error) {
        deps.logger.warn(
          { err: error, server_id: call.serverId, tool: call.tool.name, call_id: call.callId },
          'mcp app call context not recorded',
        );
      }
    },
  };
}
