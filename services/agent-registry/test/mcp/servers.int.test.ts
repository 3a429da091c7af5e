import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { faulty, startMcpHarness } from './support.ts';
import type { McpHarness } from './support.ts';

interface ServerRecord {
  server_id: string;
  agent_id: string;
  transport: string;
  state: string;
  raw_html_trusted: boolean;
  tool_count?: number;
  last_discovery_at?: string;
}

const BROKEN = { server_id: 'broken', transport: 'stdio', command: '/nonexistent/mcp-server' };
const POLICY = { mode: 'always', timeout_seconds: 60, on_timeout: 'reject' };

/** The public mcp.servers.* methods, through the service. */
describe('mcp.servers.*', () => {
  let h: McpHarness;

  beforeAll(async () => {
    h = await startMcpHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** Agent `a` with `f` (approval always) and `broken`; agent `b` with another `f`. */
  async function tenant(): Promise<{ admin: VerifiedIdentity; reader: VerifiedIdentity }> {
    const admin = h.caller();
    await h.configure(admin, 'a', [{ ...faulty('f'), approval_policy: POLICY }, BROKEN]);
    await h.configure(admin, 'b', [faulty('f')]);
    return { admin, reader: { ...admin, scopes: [] } };
  }

  describe('list and get', () => {
    it("lists the servers of the tenant's agents by agent and server id, as configured until used", async () => {
      const { reader } = await tenant();
      const page = await h.call<{ items: ServerRecord[]; next_cursor?: string }>('mcp.servers.list', {}, reader);
      expect(page.items.map((s) => [s.agent_id, s.server_id, s.state])).toEqual([
        ['a', 'broken', 'configured'],
        ['a', 'f', 'configured'],
        ['b', 'f', 'configured'],
      ]);
      expect(page.items[1]).toMatchObject({ transport: 'stdio', raw_html_trusted: false });
      expect(page.next_cursor).toBeUndefined();
    });

    it('filters and pages', async () => {
      const { reader } = await tenant();
      const first = await h.call<{ items: ServerRecord[]; next_cursor?: string }>(
        'mcp.servers.list',
        { limit: 2 },
        reader,
      );
      expect(first.items).toHaveLength(2);
      const second = await h.call<{ items: ServerRecord[]; next_cursor?: string }>(
        'mcp.servers.list',
        { limit: 2, cursor: first.next_cursor },
        reader,
      );
      expect(second.items.map((s) => s.agent_id)).toEqual(['b']);
      expect(second.next_cursor).toBeUndefined();
      const filtered = await h.call<{ items: ServerRecord[] }>(
        'mcp.servers.list',
        { filter: { agent_id: 'b' } },
        reader,
      );
      expect(filtered.items.map((s) => s.server_id)).toEqual(['f']);
      const text = await h.call<{ items: ServerRecord[] }>('mcp.servers.list', { filter: { text: 'BROK' } }, reader);
      expect(text.items.map((s) => s.server_id)).toEqual(['broken']);
      expect(await h.outcome('mcp.servers.list', { cursor: 'bogus' }, reader)).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    });

    it('reads one server, refusing an id several agents use without agent_id', async () => {
      const { reader } = await tenant();
      await expect(h.call('mcp.servers.get', { server_id: 'broken' }, reader)).resolves.toMatchObject({
        server: { server_id: 'broken', agent_id: 'a', state: 'configured' },
      });
      expect(await h.outcome('mcp.servers.get', { server_id: 'f' }, reader)).toMatchObject({
        ok: false,
        code: 'conflict',
      });
      await expect(h.call('mcp.servers.get', { server_id: 'f', agent_id: 'b' }, reader)).resolves.toMatchObject({
        server: { server_id: 'f', agent_id: 'b' },
      });
      expect(await h.outcome('mcp.servers.get', { server_id: 'nope' }, reader)).toMatchObject({
        ok: false,
        code: 'not_found',
      });
    });

    it("never shows another tenant's servers, and refuses a body naming another tenant", async () => {
      await tenant();
      const stranger = h.caller([]);
      await expect(h.call('mcp.servers.list', {}, stranger)).resolves.toMatchObject({ items: [] });
      expect(await h.outcome('mcp.servers.get', { server_id: 'broken' }, stranger)).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      const { reader } = await tenant();
      expect(await h.outcome('mcp.servers.list', { identity: { tenant: stranger.tenant } }, reader)).toMatchObject({
        ok: false,
        code: 'identity_required',
      });
    });
  });

  describe('live connections', () => {
    it('probes a server: connects, lists its tools, and the record shows it connected', async () => {
      const { reader } = await tenant();
      const probe = await h.call<{ ok: boolean; tools: string[]; latency_ms: number }>(
        'mcp.servers.probe',
        { server_id: 'f', agent_id: 'a' },
        reader,
      );
      expect(probe).toMatchObject({ server_id: 'f', ok: true });
      expect(probe.tools).toEqual(expect.arrayContaining(['echo', 'hang']));
      const { server } = await h.call<{ server: ServerRecord }>(
        'mcp.servers.get',
        { server_id: 'f', agent_id: 'a' },
        reader,
      );
      expect(server).toMatchObject({ state: 'connected', tool_count: probe.tools.length });
      expect(server.last_discovery_at).toEqual(expect.any(String));
    });

    it('probes a server that cannot start: ok false with the error', async () => {
      const { reader } = await tenant();
      const probe = await h.call<{ ok: boolean; error?: string }>('mcp.servers.probe', { server_id: 'broken' }, reader);
      expect(probe).toMatchObject({ server_id: 'broken', ok: false, error: expect.any(String) });
      const { server } = await h.call<{ server: ServerRecord }>('mcp.servers.get', { server_id: 'broken' }, reader);
      expect(['failed', 'restarting']).toContain(server.state);
    });

    it('answers health: ok with a ping time, down for a server that cannot start', async () => {
      const { reader } = await tenant();
      await expect(h.call('mcp.servers.health', { server_id: 'f', agent_id: 'a' }, reader)).resolves.toMatchObject({
        server_id: 'f',
        health: 'ok',
        latency_ms: expect.any(Number),
        checked_at: expect.any(String),
      });
      await expect(h.call('mcp.servers.health', { server_id: 'broken' }, reader)).resolves.toMatchObject({
        health: 'down',
        error: expect.any(String),
      });
    });

    it('refreshes discovery, and answers 503 for a server that cannot start', async () => {
      const { admin } = await tenant();
      const refreshed = await h.call<{ tools: string[]; prompt_count: number; resource_count: number }>(
        'mcp.servers.refresh_discovery',
        { server_id: 'f', agent_id: 'b' },
        admin,
      );
      expect(refreshed).toMatchObject({ server_id: 'f', prompt_count: 0, resource_count: 1 });
      expect(refreshed.tools).toContain('echo');
      expect(await h.outcome('mcp.servers.refresh_discovery', { server_id: 'broken' }, admin)).toMatchObject({
        ok: false,
        code: 'unavailable',
      });
    });

    it("lists a server's prompts (none) and resources", async () => {
      const { reader } = await tenant();
      await expect(h.call('mcp.servers.prompts', { server_id: 'f', agent_id: 'a' }, reader)).resolves.toMatchObject({
        server_id: 'f',
        items: [],
      });
      await expect(h.call('mcp.servers.resources', { server_id: 'f', agent_id: 'a' }, reader)).resolves.toMatchObject({
        items: [{ uri: 'big://doc', name: 'doc', mime_type: 'text/plain' }],
      });
    });
  });

  describe('policy and bindings', () => {
    it("answers a server's policy from its connection: approval, the tools a run may see, where it goes", async () => {
      const { reader } = await tenant();
      const policy = await h.call<{ allowed_tools: string[] }>(
        'mcp.servers.policy',
        { server_id: 'f', agent_id: 'a' },
        reader,
      );
      expect(policy).toMatchObject({
        server_id: 'f',
        raw_html_trusted: false,
        approval_policy: POLICY,
        egress: { transport: 'stdio', kind: 'process', command: process.execPath },
      });
      expect(policy.allowed_tools).toEqual(expect.arrayContaining(['f__echo', 'f__hang', 'f__big']));
      expect(policy.allowed_tools).not.toContain('f__dotted.name');
      const plain = await h.call<Record<string, unknown>>('mcp.servers.policy', { server_id: 'broken' }, reader);
      expect(plain.approval_policy).toBeUndefined();
      expect(plain.allowed_tools).toBeUndefined();
      expect(plain.egress).toEqual({ transport: 'stdio', kind: 'process', command: '/nonexistent/mcp-server' });
    });

    it("applies the agent's tool_exposure to allowed_tools, and names the host of an HTTP server", async () => {
      const admin = h.caller();
      await h.call(
        'agent_config.set_revision',
        {
          agent_id: 'a',
          config: {
            mcp_connections: [
              faulty('f'),
              { server_id: 'remote', transport: 'streamable_http', url: 'http://127.0.0.1:9/mcp?v=1' },
            ],
            tool_exposure: { mode: 'allow_list', tools: ['f__echo', 'f__slow', 'echo'] },
          },
        },
        admin,
      );
      const reader = { ...admin, scopes: [] };
      const policy = await h.call<{ allowed_tools: string[] }>('mcp.servers.policy', { server_id: 'f' }, reader);
      expect(policy.allowed_tools.sort()).toEqual(['f__echo', 'f__slow']);
      const remote = await h.call<Record<string, unknown>>('mcp.servers.policy', { server_id: 'remote' }, reader);
      expect(remote.egress).toEqual({
        transport: 'streamable_http',
        kind: 'network',
        scheme: 'http',
        host: '127.0.0.1:9',
      });
      expect(remote.allowed_tools).toBeUndefined();
    });

    it('lists no bindings: none exist before OAuth-bound servers', async () => {
      const { reader } = await tenant();
      await expect(h.call('mcp.servers.bindings.list', {}, reader)).resolves.toMatchObject({ items: [] });
      await expect(h.call('mcp.servers.bindings.list', { server_id: 'f' }, reader)).resolves.toMatchObject({
        items: [],
      });
    });

    // The binding methods themselves are tested with OAuth-bound servers (test/oauth).
    it.each(['mcp.servers.refresh_binding', 'mcp.servers.revoke_binding'])(
      '%s answers not_found for a binding that does not exist',
      async (method) => {
        const { admin } = await tenant();
        const body = { server_id: 'f', binding_id: 'x' };
        expect(await h.outcome(method, body, admin)).toMatchObject({ ok: false, code: 'not_found' });
      },
    );
  });
});
