import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { EVERYTHING_BIN, startEverythingHttp, startMcpHarness, waitFor } from './support.ts';
import type { HttpServer, McpHarness } from './support.ts';

/** server-everything (the MCP reference server of every protocol feature), over stdio and HTTP. */
describe('the MCP host against server-everything', () => {
  let h: McpHarness;
  let http: HttpServer;
  let sse: HttpServer;

  beforeAll(async () => {
    [h, http, sse] = await Promise.all([
      startMcpHarness(),
      startEverythingHttp('streamableHttp'),
      startEverythingHttp('sse'),
    ]);
  });

  afterAll(async () => {
    await Promise.all([h?.stop(), http?.stop(), sse?.stop()]);
  });

  const STDIO = { server_id: 'everything', transport: 'stdio', command: EVERYTHING_BIN, args: ['stdio'] };

  async function tenantWith(connection: Record<string, unknown>): Promise<VerifiedIdentity> {
    const who = h.caller();
    await h.configure(who, 'a', [connection]);
    return who;
  }

  const call = (who: VerifiedIdentity, tool: string, args: Record<string, unknown> = {}, extra = {}) =>
    h.callTool(who, { agent_id: 'a', server_id: 'everything', tool, arguments: args, ...extra });

  describe('over stdio', () => {
    it('discovers its tools, prompts and resources', async () => {
      const who = await tenantWith(STDIO);
      const found = await h.call<{ tools: string[]; prompt_count: number; resource_count: number }>(
        'mcp.servers.refresh_discovery',
        { server_id: 'everything' },
        who,
      );
      expect(found.tools).toEqual(expect.arrayContaining(['echo', 'get-sum', 'trigger-long-running-operation']));
      expect(found.prompt_count).toBeGreaterThanOrEqual(4);
      expect(found.resource_count).toBeGreaterThanOrEqual(7);
      const prompts = await h.call<{ items: { name: string; arguments?: unknown[] }[] }>(
        'mcp.servers.prompts',
        { server_id: 'everything' },
        who,
      );
      expect(prompts.items.map((p) => p.name)).toEqual(expect.arrayContaining(['simple-prompt', 'args-prompt']));
      expect(prompts.items.find((p) => p.name === 'args-prompt')?.arguments?.length).toBeGreaterThan(0);
      const resources = await h.call<{ items: { uri: string; mime_type?: string }[] }>(
        'mcp.servers.resources',
        { server_id: 'everything' },
        who,
      );
      expect(resources.items).toContainEqual(
        expect.objectContaining({ uri: 'demo://resource/static/document/architecture.md', mime_type: 'text/markdown' }),
      );
    });

    it('calls echo and get-sum', async () => {
      const who = await tenantWith(STDIO);
      expect(await call(who, 'echo', { message: 'hi' })).toMatchObject({
        ok: true,
        result: { content: [{ type: 'text', text: 'Echo: hi' }], is_error: false },
      });
      const sum = await call(who, 'get-sum', { a: 2, b: 3 });
      expect(JSON.stringify(sum)).toContain('5');
    });

    it('ends a long-running operation fast when _mcp.cancel_call cancels it', async () => {
      const who = await tenantWith(STDIO);
      await call(who, 'echo', { message: 'warm' });
      const callId = randomUUID();
      const started = Date.now();
      const pending = call(
        who,
        'trigger-long-running-operation',
        { duration: 20, steps: 4 },
        { call_id: callId, timeout_ms: 60_000 },
      );
      await waitFor(
        async () => ((await h.cancel(who, callId)) as { result?: { cancelled: boolean } }).result?.cancelled,
      );
      expect(await pending).toMatchObject({ ok: false, code: 'conflict' });
      expect(Date.now() - started).toBeLessThan(3_000);
    });

    it('refuses a long-running operation past its timeout_ms call_timeout', async () => {
      const who = await tenantWith(STDIO);
      // The server connected first: on a slow host its start alone can outlast 400 ms, which is another refusal.
      await expect(call(who, 'echo', { message: 'up' })).resolves.toMatchObject({ ok: true });
      const started = Date.now();
      const outcome = await call(
        who,
        'trigger-long-running-operation',
        { duration: 10, steps: 2 },
        { timeout_ms: 400 },
      );
      expect(outcome).toMatchObject({ ok: false, code: 'timeout' });
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it('publishes mcp.resource_updated to the reader of a subscribed resource', async () => {
      const who = await tenantWith(STDIO);
      const uri = 'demo://resource/static/document/architecture.md';
      const read = await h.call<{ uri: string; contents: { uri: string; text?: string; mime_type?: string }[] }>(
        'mcp.servers.read_resource',
        { identity: { run: 'r-9' }, server_id: 'everything', uri },
        who,
      );
      expect(read.contents[0]).toMatchObject({ uri, mime_type: 'text/markdown' });
      expect(read.contents[0]?.text?.length).toBeGreaterThan(0);
      // The server sends updates of subscribed resources once this is on (the first one at once).
      await expect(call(who, 'toggle-subscriber-updates')).resolves.toMatchObject({ ok: true });
      const frame = await waitFor(async () => (await h.events(who.tenant, 'mcp.resource_updated'))[0]);
      expect(Object.keys(frame.payload as object).sort()).toEqual(['Identity', 'OccurredAt', 'Source', 'URI']);
      expect(frame.payload).toMatchObject({
        Identity: { tenant: who.tenant, user: who.user, session: who.session, run: 'r-9' },
        Source: 'everything',
        URI: uri,
      });
      await call(who, 'toggle-subscriber-updates');
    });
  });

  describe('over streamable HTTP', () => {
    it('calls a tool, lists prompts and answers health', async () => {
      const who = await tenantWith({ server_id: 'everything', transport: 'streamable_http', url: http.url });
      expect(await call(who, 'echo', { message: 'over http' })).toMatchObject({
        ok: true,
        result: { content: [{ text: 'Echo: over http' }] },
      });
      const prompts = await h.call<{ items: unknown[] }>('mcp.servers.prompts', { server_id: 'everything' }, who);
      expect(prompts.items.length).toBeGreaterThanOrEqual(4);
      await expect(h.call('mcp.servers.health', { server_id: 'everything' }, who)).resolves.toMatchObject({
        health: 'ok',
        latency_ms: expect.any(Number),
      });
    });

    it('cancels a long-running operation over HTTP', async () => {
      const who = await tenantWith({ server_id: 'everything', transport: 'streamable_http', url: http.url });
      await call(who, 'echo', { message: 'warm' });
      const callId = randomUUID();
      const started = Date.now();
      const pending = call(
        who,
        'trigger-long-running-operation',
        { duration: 20, steps: 4 },
        { call_id: callId, timeout_ms: 60_000 },
      );
      await waitFor(
        async () => ((await h.cancel(who, callId)) as { result?: { cancelled: boolean } }).result?.cancelled,
      );
      expect(await pending).toMatchObject({ ok: false, code: 'conflict' });
      expect(Date.now() - started).toBeLessThan(3_000);
    });

    it('falls back to HTTP+SSE when the server refuses the streamable POST with a 4xx', async () => {
      const who = await tenantWith({ server_id: 'everything', transport: 'streamable_http', url: sse.url });
      expect(await call(who, 'echo', { message: 'over sse' })).toMatchObject({
        ok: true,
        result: { content: [{ text: 'Echo: over sse' }] },
      });
      const got = await h.call<{ server: { state: string; transport_in_use?: string } }>(
        'mcp.servers.get',
        { server_id: 'everything' },
        who,
      );
      expect(got.server).toMatchObject({ state: 'connected', transport: 'streamable_http', transport_in_use: 'sse' });
    });

    it('refuses calls to a server that went away server_unavailable', async () => {
      const gone = await startEverythingHttp('streamableHttp');
      const who = await tenantWith({ server_id: 'everything', transport: 'streamable_http', url: gone.url });
      await expect(call(who, 'echo', { message: 'before' })).resolves.toMatchObject({ ok: true });
      await gone.stop();
      expect(await call(who, 'echo', { message: 'after' })).toMatchObject({ ok: false, code: 'unavailable' });
      await expect(h.call('mcp.servers.health', { server_id: 'everything' }, who)).resolves.toMatchObject({
        health: 'down',
        error: expect.any(String),
      });
    });
  });
});
