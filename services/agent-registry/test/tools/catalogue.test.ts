import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_MANIFESTS, isServiceError, Tool } from '@ars/contracts';
import type { CatalogueTool } from '@ars/contracts';
import type { TenantMcpTools } from '../../src/mcp/index.ts';
import {
  buildCatalogue,
  decodeToolCursor,
  encodeToolCursor,
  findTool,
  matchesFilter,
  pageOfTools,
} from '../../src/tools/catalogue.ts';

const ALWAYS = { mode: 'always', on_timeout: 'reject' } as const;
const NEVER = { mode: 'never', on_timeout: 'reject' } as const;

const mcpTool = (server: string, tool: string, over: Partial<CatalogueTool> = {}): CatalogueTool => ({
  name: `${server}__${tool}`,
  server_id: server,
  server_tool: tool,
  transport: 'stdio',
  description: `${tool} of ${server}`,
  input_schema: { type: 'object' },
  side_effect: 'unsafe',
  approval_policy: NEVER,
  tags: ['mcp'],
  ...over,
});

const TENANT: TenantMcpTools = {
  agents: [
    {
      agent_id: 'zeta',
      tools: [mcpTool('fs', 'read', { description: 'zeta copy' })],
      unavailable_servers: [],
    },
    {
      agent_id: 'alpha',
      tools: [mcpTool('fs', 'read', { side_effect: 'read_only' }), mcpTool('fs', 'write', { approval_policy: ALWAYS })],
      unavailable_servers: [{ server_id: 'gh', state: 'failed', reason: 'connection refused' }],
    },
  ],
};

const caught = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return isServiceError(error) ? error.code : error;
  }
  return undefined;
};

describe('tool catalogue', () => {
  it('lists the built-ins and every MCP tool once, by name, as valid Tool records', () => {
    const { tools } = buildCatalogue(TENANT, {});
    const names = tools.map((t) => t.name);
    expect(names).toEqual([...BUILTIN_TOOL_MANIFESTS.map((m) => m.name), 'fs__read', 'fs__write'].sort());
    for (const tool of tools) expect(Tool.safeParse(tool).success, tool.name).toBe(true);
  });

  it('keeps the first agent by id when two agents expose one name', () => {
    const tool = findTool(buildCatalogue(TENANT, {}), 'fs__read');
    expect(tool).toMatchObject({ source: 'fs', transport: 'mcp', side_effect: 'read_only', description: 'read of fs' });
  });

  it("applies the tenant's policy over the connection's, and the connection's over the tool's default", () => {
    const plain = buildCatalogue(TENANT, {});
    expect(findTool(plain, 'fs__write').approval_policy).toEqual(ALWAYS);
    expect(findTool(plain, 'sensitive_action').approval_policy).toEqual(ALWAYS);
    const overridden = buildCatalogue(TENANT, { fs__write: NEVER, sensitive_action: NEVER, echo: ALWAYS });
    expect(findTool(overridden, 'fs__write').approval_policy).toEqual(NEVER);
    expect(findTool(overridden, 'sensitive_action').approval_policy).toEqual(NEVER);
    expect(findTool(overridden, 'echo').approval_policy).toEqual(ALWAYS);
  });

  it('answers unavailable for a tool of a server that cannot list now, not_found for anything else', () => {
    const catalogue = buildCatalogue(TENANT, {});
    expect(caught(() => findTool(catalogue, 'gh__issues'))).toBe('unavailable');
    expect(caught(() => findTool(catalogue, 'fs__nope'))).toBe('not_found');
    expect(caught(() => findTool(catalogue, 'nope'))).toBe('not_found');
  });

  it('filters by transport, source, every tag and text in name or description', () => {
    const { tools } = buildCatalogue(TENANT, {});
    const names = (filter: Parameters<typeof matchesFilter>[1]) =>
      tools.filter((t) => matchesFilter(t, filter)).map((t) => t.name);
    expect(names({ transport: 'mcp' })).toEqual(['fs__read', 'fs__write']);
    expect(names({ source: 'builtin' })).toHaveLength(BUILTIN_TOOL_MANIFESTS.length);
    expect(names({ tags: ['service', 'artifact'] })).toEqual(['artifact_read', 'artifact_write']);
    expect(names({ tags: ['hitl', 'test'] })).toEqual([]);
    expect(names({ text: 'MEMORY' })).toEqual(['memory_read', 'memory_write']);
    expect(names({ text: 'approve' })).toEqual(['sensitive_action']);
  });

  it('pages by name with an opaque cursor, none after the last page', () => {
    const { tools } = buildCatalogue(TENANT, {});
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = pageOfTools(tools, 4, cursor);
      expect(page.items.length).toBeLessThanOrEqual(4);
      seen.push(...page.items.map((t) => t.name));
      cursor = page.next_cursor;
    } while (cursor !== undefined);
    expect(seen).toEqual(tools.map((t) => t.name));
    expect(pageOfTools(tools, tools.length, undefined).next_cursor).toBeUndefined();
  });

  it('refuses a cursor this list did not make with invalid_request', () => {
    expect(decodeToolCursor(encodeToolCursor('echo'))).toBe('echo');
    expect(caught(() => decodeToolCursor('not-a-cursor'))).toBe('invalid_request');
    const foreign = Buffer.from(JSON.stringify({ m: 'memory.list', a: 'x' })).toString('base64url');
    expect(caught(() => decodeToolCursor(foreign))).toBe('invalid_request');
  });
});
