import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { openStore } from '@ars/store';
import { createAppContextRepository } from '../../src/mcp/app-context.repository.ts';
import { startMcpHarness, waitFor } from './support.ts';
import type { McpHarness } from './support.ts';

/**
 * MCP Apps (`io.modelcontextprotocol/ui`) through the service, against a
 * real stdio server with an app: app-only tools stay out of runs, a run's
 * call of an app tool is recorded and announced, and the app's view reads
 * its context and calls its tools on behalf of that run's user only.
 */

const APPS_SERVER = fileURLToPath(new URL('./fixtures/apps-server.ts', import.meta.url));
const VIEW = 'ui://charts/view.html';
const APP_AVAILABLE_KEYS = [
  'DisplayMode',
  'Identity',
  'OccurredAt',
  'RawHTMLTrusted',
  'ResourceURI',
  'ServerID',
  'ToolCallID',
  'ToolName',
];

interface Context {
  tool_call_id: string;
  tool_name: string;
  resource_uri: string;
  display_mode: string;
  raw_html_trusted: boolean;
  context: Record<string, unknown>;
  ui: { mode: string; html?: string; sandbox?: { csp: string; iframe_sandbox: string; read_with: string } };
}

describe('MCP Apps', () => {
  let h: McpHarness;

  beforeAll(async () => {
    h = await startMcpHarness();
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** A tenant whose agent `a` has the apps server as `apps`; the admin and the run owner (no scopes). */
  async function tenant(): Promise<{ admin: VerifiedIdentity; owner: VerifiedIdentity }> {
    const admin = h.caller();
    await h.configure(admin, 'a', [
      { server_id: 'apps', transport: 'stdio', command: process.execPath, args: [APPS_SERVER] },
    ]);
    return { admin, owner: { ...admin, scopes: [] } };
  }

  /** A run's call of `tool` (`_mcp.call_tool`); answers its call id. */
  async function runCall(owner: VerifiedIdentity, tool: string, args: Record<string, unknown> = {}): Promise<string> {
    const callId = `r-1:c-${randomUUID()}:1:ab`;
    const outcome = await h.callTool(owner, {
      agent_id: 'a',
      server_id: 'apps',
      tool,
      call_id: callId,
      arguments: args,
    });
    expect(outcome).toMatchObject({ ok: true });
    return callId;
  }

  const appCall = (who: VerifiedIdentity, body: Record<string, unknown>) =>
    h.outcome('mcp.apps.call_tool', { server_id: 'apps', ...body }, who);
  const contextOf = (who: VerifiedIdentity, callId: string) =>
    h.outcome('mcp.apps.tool_context', { server_id: 'apps', tool_call_id: callId }, who);

  describe('runs', () => {
    it("leaves app-only tools out of a run's catalogue and refuses a run's call of one unknown_tool", async () => {
      const { owner } = await tenant();
      const catalogue = (await h.service.rpc.call('agent-registry', '_tools.catalogue', owner, {
        tenant: owner.tenant,
        user: owner.user,
        session: owner.session,
        agent_id: 'a',
      })) as { tools: { name: string; output_schema?: unknown }[] };
      expect(catalogue.tools.map((t) => t.name).sort()).toEqual([
        'apps__model_only',
        'apps__plain',
        'apps__show_chart',
      ]);
      expect(catalogue.tools.find((t) => t.name === 'apps__show_chart')?.output_schema).toMatchObject({
        type: 'object',
      });
      const refused = await h.callTool(owner, {
        agent_id: 'a',
        server_id: 'apps',
        tool: 'refresh_chart',
        arguments: { range: 'day' },
      });
      expect(refused).toMatchObject({ ok: false, code: 'invalid_request' });
    });

    it("records a run's call of an app tool and publishes mcp.app_available to the run", async () => {
      const { owner } = await tenant();
      await runCall(owner, 'plain');
      const callId = await runCall(owner, 'show_chart', { metric: 'cpu' });
      const [event, ...more] = await waitFor(async () => {
        const events = await h.events(owner.tenant, 'mcp.app_available');
        return events.length > 0 ? events : undefined;
      });
      expect(more).toEqual([]);
      expect(Object.keys(event?.payload as object).sort()).toEqual(APP_AVAILABLE_KEYS);
      expect(event?.payload).toMatchObject({
        Identity: { tenant: owner.tenant, user: owner.user, session: owner.session, run: 'r-1' },
        ServerID: 'apps',
        ToolCallID: callId,
        ToolName: 'show_chart',
        ResourceURI: VIEW,
        DisplayMode: 'inline',
        RawHTMLTrusted: false,
      });
    });
  });

  describe('mcp.apps.tool_context', () => {
    it("answers the run user's context, with a sandbox descriptor while the server's raw HTML is not trusted", async () => {
      const { owner } = await tenant();
      const callId = await runCall(owner, 'show_chart', { metric: 'cpu' });
      const answer = await contextOf({ ...owner, session: 'console' }, callId);
      expect(answer).toMatchObject({ ok: true });
      const context = (answer as { result: Context }).result;
      expect(context).toMatchObject({
        tool_call_id: callId,
        tool_name: 'show_chart',
        resource_uri: VIEW,
        display_mode: 'inline',
        raw_html_trusted: false,
        context: {
          agent_id: 'a',
          run: 'r-1',
          session: owner.session,
          arguments: { metric: 'cpu' },
          result: {
            content: [{ type: 'text', text: 'chart of cpu' }],
            structured_content: { points: [1, 2, 3] },
            is_error: false,
          },
        },
        ui: {
          mode: 'sandboxed',
          sandbox: { iframe_sandbox: 'allow-scripts allow-forms', read_with: 'mcp.servers.read_resource' },
        },
      });
      expect(context.ui.html).toBeUndefined();
      expect(context.ui.sandbox?.csp).toContain('connect-src https://api.example.com');
      expect(context.ui.sandbox?.csp).toContain(`default-src 'none'`);
    });

    it('answers the HTML itself once an admin trusts the server', async () => {
      const { admin, owner } = await tenant();
      const callId = await runCall(owner, 'show_chart', { metric: 'mem' });
      await h.call('mcp.servers.set_raw_html_trust', { server_id: 'apps', trusted: true }, admin);
      const context = (await contextOf(owner, callId)) as { ok: true; result: Context };
      expect(context.result).toMatchObject({ raw_html_trusted: true, ui: { mode: 'raw_html' } });
      expect(context.result.ui.html).toContain('chart view');
      const later = await runCall(owner, 'show_chart', { metric: 'disk' });
      const announced = await waitFor(async () =>
        (await h.events(owner.tenant, 'mcp.app_available')).find((e) => e.payload.ToolCallID === later),
      );
      expect(announced.payload).toMatchObject({ RawHTMLTrusted: true });
    });

    it("answers not_found for another user's, another tenant's or an unknown call", async () => {
      const { owner } = await tenant();
      const callId = await runCall(owner, 'show_chart', { metric: 'cpu' });
      expect(await contextOf({ ...owner, user: 'bob' }, callId)).toMatchObject({ ok: false, code: 'not_found' });
      const stranger = h.caller([]);
      expect(await contextOf(stranger, callId)).toMatchObject({ ok: false, code: 'not_found' });
      expect(await contextOf(owner, 'r-1:none:1:00')).toMatchObject({ ok: false, code: 'not_found' });
      // The context of a tool without UI is never recorded.
      const plain = await runCall(owner, 'plain');
      expect(await contextOf(owner, plain)).toMatchObject({ ok: false, code: 'not_found' });
    });

    it('refuses a body identity naming another user identity_required', async () => {
      const { owner } = await tenant();
      const callId = await runCall(owner, 'show_chart', { metric: 'cpu' });
      const outcome = await h.outcome(
        'mcp.apps.tool_context',
        { identity: { user: 'bob' }, server_id: 'apps', tool_call_id: callId },
        owner,
      );
      expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
    });
  });

  describe('mcp.apps.call_tool', () => {
    it("calls the app's own tool for the run's user and counts it in the tool metrics", async () => {
      const { owner } = await tenant();
      const callId = await runCall(owner, 'show_chart', { metric: 'cpu' });
      const outcome = await appCall(owner, {
        tool_name: 'refresh_chart',
        tool_call_id: callId,
        arguments: { range: 'week' },
      });
      expect(outcome).toMatchObject({
        ok: true,
        result: { is_error: false, content: [{ type: 'text', text: 'refreshed for a week' }] },
      });
      // A tool visible to both may be called by the app as well.
      expect(
        await appCall(owner, { tool_name: 'show_chart', tool_call_id: callId, arguments: { metric: 'io' } }),
      ).toMatchObject({
        ok: true,
      });
      const metrics = await h.call<{ items: { tool: string; invocations: number }[] }>(
        'tools.metrics',
        { name: 'apps__refresh_chart' },
        owner,
      );
      expect(metrics.items).toEqual([expect.objectContaining({ tool: 'apps__refresh_chart', invocations: 1 })]);
    });

    it('announces MCP Apps support in initialize: the server sees the ui extension with its MIME type', async () => {
      const { owner } = await tenant();
      const callId = await runCall(owner, 'show_chart', { metric: 'cpu' });
      const outcome = await appCall(owner, { tool_name: 'host_capabilities', tool_call_id: callId });
      const text = (outcome as { result?: { content?: { text?: string }[] } }).result?.content?.[0]?.text ?? '{}';
      expect(JSON.parse(text)).toEqual({
        extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
      });
    });

    it('refuses a tool whose visibility leaves out the app scope_mismatch', async () => {
      const { owner } = await tenant();
      const callId = await runCall(owner, 'show_chart', { metric: 'cpu' });
      expect(await appCall(owner, { tool_name: 'model_only', tool_call_id: callId })).toMatchObject({
        ok: false,
        code: 'scope_mismatch',
      });
    });

    it('refuses arguments its input schema refuses invalid_request, counted as invalid_args', async () => {
      const { owner } = await tenant();
      const callId = await runCall(owner, 'show_chart', { metric: 'cpu' });
      const outcome = await appCall(owner, {
        tool_name: 'refresh_chart',
        tool_call_id: callId,
        arguments: { range: 'year' },
      });
      expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
      expect((outcome as { message: string }).message).toMatch(/range/);
      const metrics = await h.call<{ items: { invalid_args: number }[] }>(
        'tools.metrics',
        { name: 'apps__refresh_chart' },
        owner,
      );
      expect(metrics.items[0]?.invalid_args).toBe(1);
    });

    it("refuses a tool the server does not list, another user's context and an unknown one not_found", async () => {
      const { owner } = await tenant();
      const callId = await runCall(owner, 'show_chart', { metric: 'cpu' });
      expect(await appCall(owner, { tool_name: 'nope', tool_call_id: callId })).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      expect(
        await appCall(
          { ...owner, user: 'bob' },
          { tool_name: 'refresh_chart', tool_call_id: callId, arguments: { range: 'day' } },
        ),
      ).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      expect(
        await appCall(owner, { tool_name: 'refresh_chart', tool_call_id: 'r-9:x:1:00', arguments: { range: 'day' } }),
      ).toMatchObject({
        ok: false,
        code: 'not_found',
      });
    });

    it('refuses a request without tool_call_id invalid_request', async () => {
      const { owner } = await tenant();
      expect(await appCall(owner, { tool_name: 'refresh_chart', arguments: { range: 'day' } })).toMatchObject({
        ok: false,
        code: 'invalid_request',
      });
    });
  });

  describe('mcp.servers.set_raw_html_trust', () => {
    it('stores the trust, publishes mcp.raw_html_trust_toggled once per change, and get, list and policy report it', async () => {
      const { admin, owner } = await tenant();
      const set = await h.call('mcp.servers.set_raw_html_trust', { server_id: 'apps', trusted: true }, admin);
      expect(set).toMatchObject({ server_id: 'apps', trusted: true, changed: true });
      const again = await h.call('mcp.servers.set_raw_html_trust', { server_id: 'apps', trusted: true }, admin);
      expect(again).toMatchObject({ changed: false });
      const events = await waitFor(async () => {
        const found = await h.events(admin.tenant, 'mcp.raw_html_trust_toggled');
        return found.length > 0 ? found : undefined;
      });
      expect(events).toHaveLength(1);
      expect(Object.keys(events[0]?.payload as object).sort()).toEqual([
        'Actor',
        'OccurredAt',
        'ServerName',
        'Trusted',
      ]);
      expect(events[0]?.payload).toMatchObject({
        Actor: { tenant: admin.tenant, user: admin.user, session: admin.session, run: '' },
        ServerName: 'apps',
        Trusted: true,
      });
      expect(await h.call('mcp.servers.get', { server_id: 'apps' }, owner)).toMatchObject({
        server: { raw_html_trusted: true },
      });
      const listed = await h.call<{ items: { raw_html_trusted: boolean }[] }>('mcp.servers.list', {}, owner);
      expect(listed.items.map((s) => s.raw_html_trusted)).toEqual([true]);
      expect(await h.call('mcp.servers.policy', { server_id: 'apps' }, owner)).toMatchObject({
        raw_html_trusted: true,
      });
    });

    it("lets an agent's own setting win over the tenant-wide one", async () => {
      const { admin, owner } = await tenant();
      await h.call('mcp.servers.set_raw_html_trust', { server_id: 'apps', trusted: true }, admin);
      const own = await h.call(
        'mcp.servers.set_raw_html_trust',
        { server_id: 'apps', agent_id: 'a', trusted: false },
        admin,
      );
      expect(own).toMatchObject({ agent_id: 'a', trusted: false, changed: false });
      expect(await h.call('mcp.servers.get', { server_id: 'apps' }, owner)).toMatchObject({
        server: { raw_html_trusted: false },
      });
    });

    it('refuses a caller without admin identity_scope_required, and an unknown server or agent not_found', async () => {
      const { admin, owner } = await tenant();
      expect(
        await h.outcome('mcp.servers.set_raw_html_trust', { server_id: 'apps', trusted: true }, owner),
      ).toMatchObject({
        ok: false,
        code: 'identity_scope_required',
      });
      expect(
        await h.outcome('mcp.servers.set_raw_html_trust', { server_id: 'ghost', trusted: true }, admin),
      ).toMatchObject({
        ok: false,
        code: 'not_found',
      });
      expect(
        await h.outcome(
          'mcp.servers.set_raw_html_trust',
          { server_id: 'apps', agent_id: 'ghost', trusted: true },
          admin,
        ),
      ).toMatchObject({ ok: false, code: 'not_found' });
      expect(await h.events(admin.tenant, 'mcp.raw_html_trust_toggled')).toEqual([]);
    });
  });
});

describe('app contexts expire', () => {
  it('answers no context past its expiry, and a prune deletes it', async () => {
    const store = await openStore({
      dataDir: '/nonexistent',
      database: 'app_contexts',
      inMemory: true,
      engine: 'nedb',
    });
    try {
      const contexts = await createAppContextRepository(store);
      const record = {
        tenant: 't',
        user: 'u',
        session: 's',
        run: 'r',
        agent_id: 'a',
        server_id: 'apps',
        tool: 'show_chart',
        tool_call_id: 'c-1',
        arguments: {},
        result: { content: [], is_error: false },
        resource_uri: VIEW,
        display_mode: 'inline',
        created_at: '2026-01-01T00:00:00.000Z',
        expires_at: '2026-01-02T00:00:00.000Z',
      };
      await contexts.put(record);
      await contexts.put({ ...record, tool_call_id: 'c-2', expires_at: '2026-01-03T00:00:00.000Z' });
      const before = new Date('2026-01-01T12:00:00Z');
      const after = new Date('2026-01-02T12:00:00Z');
      expect(await contexts.get('t', 'apps', 'c-1', before)).toMatchObject({ tool_call_id: 'c-1' });
      expect(await contexts.get('t', 'apps', 'c-1', after)).toBeNull();
      expect(await contexts.prune(after)).toBe(1);
      expect(await contexts.get('t', 'apps', 'c-2', after)).toMatchObject({ tool_call_id: 'c-2' });
    } finally {
      await store.close();
    }
  });
});
