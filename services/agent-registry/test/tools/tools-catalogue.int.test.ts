import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_MANIFESTS, Tool, ToolListResponse, ToolManifest } from '@ars/contracts';
import { hostTool, startToolsHarness } from './helpers/tools-harness.ts';
import type { ToolsHarness } from './helpers/tools-harness.ts';

type Page = { items: Tool[]; next_cursor?: string };
const BUILTIN_NAMES = BUILTIN_TOOL_MANIFESTS.map((m) => m.name);
const ALWAYS = { mode: 'always', on_timeout: 'reject' };

describe('tools.list, tools.get and tools.describe', () => {
  let h: ToolsHarness;

  beforeAll(async () => {
    h = await startToolsHarness('catalogue');
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** A caller whose tenant has one agent with a filesystem server, and a GitHub server that is down. */
  function tenantWithMcp(scopes: string[] = []) {
    const who = h.caller(scopes);
    h.setAgents(who.tenant, [
      {
        agent_id: 'helper',
        tools: [
          hostTool('fs', 'read_file', { side_effect: 'read_only', tags: ['mcp', 'read_only'] }),
          hostTool('fs', 'write_file', { approval_policy: ALWAYS as never }),
        ],
        unavailable_servers: [{ server_id: 'gh', state: 'failed', reason: 'connection refused' }],
      },
    ]);
    return who;
  }

  it('lists the built-in tools to a caller without scopes, every record a valid Tool', async () => {
    const page = await h.call<Page>('tools.list', {}, h.caller([]));
    expect(ToolListResponse.safeParse(page).success).toBe(true);
    expect(page.items.map((t) => t.name)).toEqual([...BUILTIN_NAMES].sort());
    expect(page.next_cursor).toBeUndefined();
    const echo = page.items.find((t) => t.name === 'echo');
    expect(echo).toEqual({
      name: 'echo',
      description: 'Returns its arguments unchanged (as JSON).',
      transport: 'builtin',
      source: 'builtin',
      side_effect: 'read_only',
      approval_policy: { mode: 'never', on_timeout: 'reject' },
      tags: ['builtin'],
      enabled: true,
      input_schema: { type: 'object', properties: {}, additionalProperties: {} },
    });
  });

  it("lists the MCP tools of the tenant's agents beside the built-ins, with the connection's policy", async () => {
    const page = await h.call<Page>('tools.list', {}, tenantWithMcp());
    expect(page.items.map((t) => t.name)).toEqual([...BUILTIN_NAMES, 'fs__read_file', 'fs__write_file'].sort());
    expect(page.items.find((t) => t.name === 'fs__write_file')).toMatchObject({
      transport: 'mcp',
      source: 'fs',
      side_effect: 'unsafe',
      approval_policy: ALWAYS,
      input_schema: { type: 'object', properties: { path: { type: 'string' } } },
    });
  });

  it('filters by transport, source, tags and text', async () => {
    const who = tenantWithMcp();
    const names = async (filter: Record<string, unknown>) =>
      (await h.call<Page>('tools.list', { filter }, who)).items.map((t) => t.name);
    expect(await names({ transport: 'mcp' })).toEqual(['fs__read_file', 'fs__write_file']);
    expect(await names({ source: 'fs', tags: ['read_only'] })).toEqual(['fs__read_file']);
    expect(await names({ tags: ['builtin', 'memory'] })).toEqual(['memory_read', 'memory_write']);
    expect(await names({ text: 'WRITE' })).toEqual(['artifact_write', 'fs__write_file', 'memory_write']);
  });

  it('pages by name with next_cursor until the last page', async () => {
    const who = tenantWithMcp();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await h.call<Page>('tools.list', { limit: 3, ...(cursor === undefined ? {} : { cursor }) }, who);
      seen.push(...page.items.map((t) => t.name));
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor !== undefined);
    expect(seen).toEqual([...BUILTIN_NAMES, 'fs__read_file', 'fs__write_file'].sort());
    expect(pages).toBe(Math.ceil(seen.length / 3));
  });

  it('refuses a cursor it did not make with invalid_request', async () => {
    expect(await h.outcome('tools.list', { cursor: 'bogus' }, h.caller([]))).toMatchObject({
      ok: false,
      code: 'invalid_request',
    });
  });

  it("does not show one tenant's MCP tools to another", async () => {
    tenantWithMcp();
    const page = await h.call<Page>('tools.list', { filter: { transport: 'mcp' } }, h.caller([]));
    expect(page.items).toEqual([]);
  });

  it('gets one built-in tool and one MCP tool', async () => {
    const who = tenantWithMcp();
    const sensitive = await h.call<Tool>('tools.get', { name: 'sensitive_action' }, who);
    expect(Tool.safeParse(sensitive).success).toBe(true);
    expect(sensitive).toMatchObject({ name: 'sensitive_action', approval_policy: ALWAYS, side_effect: 'unsafe' });
    expect(await h.call<Tool>('tools.get', { name: 'fs__read_file' }, who)).toMatchObject({
      name: 'fs__read_file',
      side_effect: 'read_only',
    });
  });

  it("describes a tool's manifest with the JSON Schema of its arguments", async () => {
    const manifest = await h.call<ToolManifest>('tools.describe', { name: 'wait' }, h.caller([]));
    expect(ToolManifest.safeParse(manifest).success).toBe(true);
    expect(manifest).not.toHaveProperty('enabled');
    expect(manifest).toMatchObject({
      name: 'wait',
      transport: 'builtin',
      source: 'builtin',
      input_schema: {
        type: 'object',
        properties: { ms: { type: 'integer', minimum: 0, maximum: 600_000 } },
        required: ['ms'],
        additionalProperties: false,
      },
    });
  });

  it("describes an MCP tool with its server's output schema and its OAuth provider and scopes", async () => {
    const who = h.caller([]);
    const output = { type: 'object', properties: { issues: { type: 'array' } } };
    h.setAgents(who.tenant, [
      {
        agent_id: 'helper',
        tools: [
          {
            ...hostTool('gh', 'list_issues', { output_schema: output }),
            oauth: { provider_name: 'github', scopes: ['repo'] },
          },
          hostTool('fs', 'read_file'),
        ],
        unavailable_servers: [],
      },
    ]);
    const manifest = await h.call<ToolManifest>('tools.describe', { name: 'gh__list_issues' }, who);
    expect(ToolManifest.safeParse(manifest).success).toBe(true);
    expect(manifest).toMatchObject({
      name: 'gh__list_issues',
      source: 'gh',
      output_schema: output,
      oauth: { provider_name: 'github', scopes: ['repo'] },
    });
    const plain = await h.call<ToolManifest>('tools.describe', { name: 'fs__read_file' }, who);
    expect(plain.output_schema).toBeUndefined();
    expect(plain.oauth).toBeUndefined();
    // tools.get shows the catalogue entry only.
    const tool = await h.call<Record<string, unknown>>('tools.get', { name: 'gh__list_issues' }, who);
    expect(tool.oauth).toBeUndefined();
  });

  it.each(['tools.get', 'tools.describe'])('%s answers not_found for an unknown tool', async (method) => {
    expect(await h.outcome(method, { name: 'no_such_tool' }, tenantWithMcp())).toMatchObject({
      ok: false,
      code: 'not_found',
    });
  });

  it.each(['tools.get', 'tools.describe'])(
    '%s answers unavailable for a tool of a server that cannot list its tools now',
    async (method) => {
      expect(await h.outcome(method, { name: 'gh__create_issue' }, tenantWithMcp())).toMatchObject({
        ok: false,
        code: 'unavailable',
      });
    },
  );

  it.each([
    ['tools.list', {}],
    ['tools.get', { name: 'echo' }],
    ['tools.describe', { name: 'echo' }],
  ])('%s refuses a body naming another tenant with identity_required', async (method, body) => {
    const outcome = await h.outcome(method, { ...body, identity: { tenant: 'elsewhere' } }, h.caller(['admin']));
    expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
  });

  it.each([
    ['tools.list', { limit: 0 }],
    ['tools.list', { filter: { colour: 'red' } }],
    ['tools.get', {}],
    ['tools.describe', { name: '' }],
  ])('%s refuses a bad body %j with invalid_request', async (method, body) => {
    expect(await h.outcome(method, body, h.caller([]))).toMatchObject({ ok: false, code: 'invalid_request' });
  });
});
