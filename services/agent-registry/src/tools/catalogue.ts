import { BUILTIN_TOOL_MANIFESTS, MCP_TOOL_NAME_SEPARATOR, ServiceError } from '@ars/contracts';
import type { ApprovalPolicy, CatalogueTool, Tool, ToolListRequest, ToolManifest } from '@ars/contracts';
import type { HostedMcpTool, TenantMcpTools, UnavailableServer } from '../mcp/index.ts';

/**
 * A tenant's tool catalogue: the built-in tools and the MCP tools of the
 * tenant's agents side by side, each with its effective approval policy
 * (the tenant's override, else the MCP connection's, else the tool's
 * default), ordered by name. Pure: the handlers load what it is made of.
 */

/** `Tool.source` of a built-in tool (an MCP tool's is its server id). */
export const BUILTIN_SOURCE = 'builtin';
/** `Tool.transport` of an MCP tool, whichever transport its connection uses. */
export const MCP_TRANSPORT = 'mcp';

/** The catalogue of one tenant. */
export interface TenantCatalogue {
  /** By name, ascending; names are unique. */
  readonly tools: readonly Tool[];
  /** Servers of the tenant's agents whose tools could not be listed now. */
  readonly unavailable: readonly UnavailableServer[];
  /** What `tools.describe` adds for an MCP tool (output schema, OAuth provider and scopes), by name. */
  readonly details: ReadonlyMap<string, Pick<ToolManifest, 'output_schema' | 'oauth'>>;
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** An MCP tool as the catalogue lists it, under `policy`. */
export function mcpTool(tool: CatalogueTool, policy: ApprovalPolicy): Tool {
  return {
    name: tool.name,
    description: tool.description,
    transport: MCP_TRANSPORT,
    source: tool.server_id,
    side_effect: tool.side_effect,
    approval_policy: policy,
    tags: [...tool.tags],
    enabled: true,
    input_schema: tool.input_schema,
  };
}

/**
 * The tenant's catalogue from the MCP tools of its agents and its approval
 * overrides. Two agents exposing one name (the same server id) list it once,
 * as the first agent by id has it.
 */
export function buildCatalogue(
  mcp: TenantMcpTools,
  overrides: Readonly<Record<string, ApprovalPolicy>>,
): TenantCatalogue {
  const tools = new Map<string, Tool>();
  for (const m of BUILTIN_TOOL_MANIFESTS) {
    tools.set(m.name, {
      name: m.name,
      description: m.description,
      transport: m.transport,
      source: BUILTIN_SOURCE,
      side_effect: m.side_effect,
      approval_policy: overrides[m.name] ?? m.approval_policy,
      tags: [...m.tags],
      enabled: true,
      input_schema: m.input_schema,
    });
  }
  const unavailable = new Map<string, UnavailableServer>();
  const details = new Map<string, Pick<ToolManifest, 'output_schema' | 'oauth'>>();
  for (const agent of [...mcp.agents].sort((a, b) => byName({ name: a.agent_id }, { name: b.agent_id }))) {
    for (const tool of agent.tools) {
      if (tools.has(tool.name)) continue;
      tools.set(tool.name, mcpTool(tool, overrides[tool.name] ?? tool.approval_policy));
      details.set(tool.name, detailsOf(tool));
    }
    for (const server of agent.unavailable_servers) {
      if (!unavailable.has(server.server_id)) unavailable.set(server.server_id, server);
    }
  }
  return { tools: [...tools.values()].sort(byName), unavailable: [...unavailable.values()], details };
}

function detailsOf(tool: HostedMcpTool): Pick<ToolManifest, 'output_schema' | 'oauth'> {
  return {
    ...(tool.output_schema === undefined ? {} : { output_schema: tool.output_schema }),
    ...(tool.oauth === undefined
      ? {}
      : { oauth: { provider_name: tool.oauth.provider_name, scopes: [...tool.oauth.scopes] } }),
  };
}

/** The server of an MCP tool's exposed name, if it has the `<server_id>__<tool>` form. */
export function serverOf(name: string): string | undefined {
  const at = name.indexOf(MCP_TOOL_NAME_SEPARATOR);
  return at > 0 ? name.slice(0, at) : undefined;
}

/**
 * The tool `name` of the catalogue. A name on a server that could not be
 * listed now is 503 `unavailable` (it may exist); any other unknown name is
 * 404 `not_found`.
 */
export function findTool(catalogue: TenantCatalogue, name: string): Tool {
  const tool = catalogue.tools.find((t) => t.name === name);
  if (tool !== undefined) return tool;
  const server = serverOf(name);
  const down = catalogue.unavailable.find((s) => s.server_id === server);
  if (down !== undefined) {
    throw new ServiceError('unavailable', `MCP server ${down.server_id} cannot list its tools now (${down.state})`);
  }
  throw new ServiceError('not_found', `no tool named ${name}`);
}

/** A tool's full manifest (`tools.describe`): an MCP tool's with its output schema and OAuth provider, when it has them. */
export function manifestOf(tool: Tool, catalogue?: Pick<TenantCatalogue, 'details'>): ToolManifest {
  const { enabled: _enabled, ...manifest } = tool;
  return { ...manifest, ...catalogue?.details.get(tool.name) };
}

/** The `tools.list` filter: every given member must match (tags: the tool carries all of them; text: in name or description, any case). */
export function matchesFilter(tool: Tool, filter: ToolListRequest['filter']): boolean {
  if (filter === undefined) return true;
  if (filter.transport !== undefined && tool.transport !== filter.transport) return false;
  if (filter.source !== undefined && tool.source !== filter.source) return false;
  if (filter.tags !== undefined && !filter.tags.every((tag) => tool.tags.includes(tag))) return false;
  if (filter.text !== undefined) {
    const text = filter.text.toLowerCase();
    if (!tool.name.toLowerCase().includes(text) && !tool.description.toLowerCase().includes(text)) return false;
  }
  return true;
}

const CURSOR_METHOD = 'tools.list';

/** An opaque `tools.list` cursor: the page continues after the tool named `after`. */
export function encodeToolCursor(after: string): string {
  return Buffer.from(JSON.stringify({ m: CURSOR_METHOD, a: after })).toString('base64url');
}

/** The name a `tools.list` cursor continues after; anything else is 400 `invalid_request`. */
export function decodeToolCursor(cursor: string): string {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    body = undefined;
  }
  const parsed = body as { m?: unknown; a?: unknown } | undefined;
  if (parsed?.m !== CURSOR_METHOD || typeof parsed.a !== 'string') {
    throw new ServiceError('invalid_request', `${CURSOR_METHOD}: cursor is not a next_cursor of this read`);
  }
  return parsed.a;
}

/** One page of `tools` (sorted by name) after `cursor`; `next_cursor` absent on the last page. */
export function pageOfTools(
  tools: readonly Tool[],
  limit: number,
  cursor: string | undefined,
): { items: Tool[]; next_cursor?: string } {
  const after = cursor === undefined ? undefined : decodeToolCursor(cursor);
  const rest = after === undefined ? tools : tools.filter((t) => t.name > after);
  const items = rest.slice(0, limit);
  const last = items[items.length - 1];
  return rest.length > limit && last !== undefined ? { items, next_cursor: encodeToolCursor(last.name) } : { items };
}
