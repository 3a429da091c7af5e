import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_TOOL_MANIFESTS, TOOLS_CATALOGUE, TOOLS_RECORD_CALLS } from '@ars/contracts';
import type { Tool, ToolManifest, VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import { startHarness } from '../helpers/harness.ts';
import type { Harness } from '../helpers/harness.ts';

/** server-everything's entry, run with this node over stdio. */
const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const EV = { server_id: 'ev', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] };
const ALWAYS = { mode: 'always', on_timeout: 'reject' };

/**
 * The catalogue as agent-registry serves it, in front of its real MCP host:
 * an agent connected to server-everything over stdio.
 */
describe('the tool catalogue of agent-registry', () => {
  let h: Harness;
  let admin: VerifiedIdentity;

  beforeAll(async () => {
    h = await startHarness('tools-service');
    admin = h.caller(['admin']);
    await h.call('agent_config.set_revision', { agent_id: 'helper', config: { mcp_connections: [EV] } }, admin);
  });

  afterAll(async () => {
    await h?.stop();
  });

  const owner = () => ({ tenant: admin.tenant, user: admin.user, session: admin.session });

  it('lists the built-ins to a tenant without agents', async () => {
    const page = await h.call<{ items: Tool[] }>('tools.list', { limit: 500 }, h.caller([]));
    expect(page.items.map((t) => t.name)).toEqual(BUILTIN_TOOL_MANIFESTS.map((m) => m.name).sort());
  });

  it("lists and describes the MCP tools of the tenant's agent, side effect from their annotations", async () => {
    const page = await h.call<{ items: Tool[] }>('tools.list', { filter: { source: 'ev' }, limit: 500 }, admin);
    expect(page.items.map((t) => t.name)).toContain('ev__get-sum');
    const echo = page.items.find((t) => t.name === 'ev__echo');
    expect(echo).toMatchObject({ transport: 'mcp', source: 'ev', side_effect: 'read_only', enabled: true });
    const manifest = await h.call<ToolManifest>('tools.describe', { name: 'ev__echo' }, admin);
    expect(manifest.input_schema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
  });

  it("sets an MCP tool's policy, which _tools.catalogue then answers for a run of the agent", async () => {
    await h.call('tools.set_approval_policy', { name: 'ev__echo', policy: ALWAYS }, admin);
    const catalogue = await callInternal(h.service.rpc, TOOLS_CATALOGUE, admin, { ...owner(), agent_id: 'helper' });
    expect(catalogue.tools.find((t) => t.name === 'ev__echo')).toMatchObject({
      server_id: 'ev',
      server_tool: 'echo',
      approval_policy: ALWAYS,
    });
    expect(catalogue.approval_policies).toEqual({ ev__echo: ALWAYS });
    expect(catalogue.unavailable_servers).toEqual([]);
  });

  it('computes metrics from the calls the engine records', async () => {
    const at = new Date().toISOString();
    const call = { transport: 'stdio', source: 'ev', approval_requested: false, attempts: 1, bytes_in: 20 };
    await callInternal(h.service.rpc, TOOLS_RECORD_CALLS, admin, {
      tenant: admin.tenant,
      calls: [
        { ...call, tool: 'ev__echo', outcome: 'completed', duration_ms: 2, bytes_out: 30, artifacts_offloaded: 0, at },
        { ...call, tool: 'ev__echo', outcome: 'failed', duration_ms: 2, bytes_out: 0, artifacts_offloaded: 0, at },
      ],
    });
    const metrics = await h.call<{ items: Record<string, unknown>[] }>('tools.metrics', { name: 'ev__echo' }, admin);
    expect(metrics.items).toEqual([
      expect.objectContaining({ tool: 'ev__echo', invocations: 2, failures: 1, p50_ms: expect.any(Number) }),
    ]);
  });

  it('answers tools.revoke_oauth with nothing revoked for a source without OAuth grants', async () => {
    expect(await h.outcome('tools.revoke_oauth', { source: 'ev' }, admin)).toMatchObject({
      ok: true,
      result: { source: 'ev', revoked: 0 },
    });
  });
});
