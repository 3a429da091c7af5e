import { MCP_TOOL_NAME_SEPARATOR } from '@ars/contracts';
import type { ApprovalPolicy, CatalogueTool, McpConnection, SideEffectClass } from '@ars/contracts';

/**
 * How an MCP tool appears to a run: its exposed name, side-effect class and
 * catalogue entry. Pure.
 */

/** What LLM function-calling APIs accept as a function name: at most 64 of `[A-Za-z0-9_-]`. */
const EXPOSED_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The approval policy of a connection that sets none. */
export const DEFAULT_APPROVAL_POLICY: ApprovalPolicy = Object.freeze({ mode: 'never', on_timeout: 'reject' });

/** A tool as a server lists it (the members of MCP's `Tool` the host reads). */
export interface ListedTool {
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema: Record<string, unknown>;
  readonly annotations?:
    | {
        readonly title?: string | undefined;
        readonly readOnlyHint?: boolean | undefined;
        readonly destructiveHint?: boolean | undefined;
        readonly idempotentHint?: boolean | undefined;
        readonly openWorldHint?: boolean | undefined;
      }
    | undefined;
}

/**
 * `<server_id>__<tool>`, or null when that is not a valid function name
 * (longer than 64 characters, or a character outside `[A-Za-z0-9_-]`): such
 * a tool is left out of the catalogue (the host logs a warning once per
 * discovery) and cannot be called by a run.
 */
export function exposedToolName(serverId: string, tool: string): string | null {
  const name = `${serverId}${MCP_TOOL_NAME_SEPARATOR}${tool}`;
  return EXPOSED_NAME.test(name) ? name : null;
}

/**
 * The side-effect class from the tool's annotations: `readOnlyHint` →
 * `read_only`, else `idempotentHint` → `idempotent`, else `unsafe` (MCP's
 * hints are untrusted defaults: absent means a possible side effect).
 */
export function sideEffectOf(tool: ListedTool): SideEffectClass {
  if (tool.annotations?.readOnlyHint === true) return 'read_only';
  if (tool.annotations?.idempotentHint === true) return 'idempotent';
  return 'unsafe';
}

/** Tags from the annotations a planner or a console may filter on. */
function tagsOf(tool: ListedTool): string[] {
  const tags = ['mcp'];
  if (tool.annotations?.destructiveHint === true) tags.push('destructive');
  if (tool.annotations?.openWorldHint === true) tags.push('open_world');
  return tags;
}

/** The catalogue entry of one listed tool, or null when its exposed name is not valid. */
export function catalogueToolOf(connection: McpConnection, tool: ListedTool): CatalogueTool | null {
  const name = exposedToolName(connection.server_id, tool.name);
  if (name === null) return null;
  return {
    name,
    server_id: connection.server_id,
    server_tool: tool.name,
    transport: connection.transport,
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? '',
    input_schema: tool.inputSchema,
    side_effect: sideEffectOf(tool),
    approval_policy: connection.approval_policy ?? DEFAULT_APPROVAL_POLICY,
    tags: tagsOf(tool),
  };
}

/** The tools of `serverId` left out of the catalogue for their exposed name (see {@link exposedToolName}). */
export function unnamedTools(serverId: string, tools: readonly { readonly name: string }[]): string[] {
  return tools.filter((t) => exposedToolName(serverId, t.name) === null).map((t) => t.name);
}
