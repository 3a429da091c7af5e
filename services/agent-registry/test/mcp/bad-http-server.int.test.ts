import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { startBadHttpServer } from './bad-http-server.ts';
import type { BadHttpServer } from './bad-http-server.ts';
import { faulty, startMcpHarness, waitFor } from './support.ts';
import type { McpHarness } from './support.ts';

/**
 * The MCP host against a server over streamable HTTP that breaks the
 * protocol: every failure ends in a documented refusal of `_mcp.call_tool`
 * within its bounds, and a bad server holds no other server's calls.
 */
describe('the MCP host against a misbehaving HTTP server', () => {
  let h: McpHarness;
  let bad: BadHttpServer;
  let silent: BadHttpServer;
  let unauthorized: BadHttpServer;

  beforeAll(async () => {
    h = await startMcpHarness({ MCP_CONNECT_TIMEOUT_MS: '1000' });
    bad = await startBadHttpServer();
    silent = await startBadHttpServer({ hangInitialize: true });
    unauthorized = await startBadHttpServer({ unauthorizedThenHang: true });
  });

  afterAll(async () => {
    await h?.stop();
    await bad?.stop();
    await silent?.stop();
    await unauthorized?.stop();
  });

  /** A tenant whose agent `a` has the bad server as `h` and the stdio fixture as `g`. */
  async function tenant(): Promise<VerifiedIdentity> {
    const who = h.caller();
    await h.configure(who, 'a', [{ server_id: 'h', transport: 'streamable_http', url: bad.url }, faulty('g')]);
    return who;
  }

  const call = (who: VerifiedIdentity, tool: string, extra: Record<string, unknown> = {}) =>
    h.callTool(who, { agent_id: 'a', server_id: 'h', tool, arguments: { text: tool }, ...extra });

  it('calls a tool of the server', async () => {
    const who = await tenant();
    expect(await call(who, 'echo')).toMatchObject({ ok: true, result: { content: [{ type: 'text', text: 'echo' }] } });
  });

  it('refuses an answer that is not JSON protocol_error, and serves again', async () => {
    const who = await tenant();
    const started = Date.now();
    const outcome = await call(who, 'not_json');
    expect(outcome).toMatchObject({ ok: false, code: 'internal' });
    expect(Date.now() - started).toBeLessThan(3_000);
    await waitFor(async () => (await call(who, 'echo')).ok);
  });

  it('refuses JSON that is not JSON-RPC protocol_error within the call timeout, and serves again', async () => {
    const who = await tenant();
    const started = Date.now();
    expect(await call(who, 'not_jsonrpc', { timeout_ms: 3_000 })).toMatchObject({ ok: false, code: 'internal' });
    expect(Date.now() - started).toBeLessThan(5_000);
    await waitFor(async () => (await call(who, 'echo')).ok);
  });

  it('refuses a call the server never answers call_timeout within its timeout_ms', async () => {
    const who = await tenant();
    const started = Date.now();
    expect(await call(who, 'hang', { timeout_ms: 400 })).toMatchObject({ ok: false, code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('refuses a call whose connection is cut mid-call server_unavailable, then reconnects', async () => {
    const who = await tenant();
    await call(who, 'echo');
    const outcome = await call(who, 'crash');
    expect(outcome).toMatchObject({ ok: false, code: 'unavailable' });
    await waitFor(async () => (await call(who, 'echo')).ok);
  });

  it('refuses a server that never answers initialize server_unavailable within the connect timeout', async () => {
    const who = h.caller();
    await h.configure(who, 'a', [{ server_id: 'h', transport: 'streamable_http', url: silent.url }]);
    const started = Date.now();
    expect(await call(who, 'echo', { timeout_ms: 30_000 })).toMatchObject({ ok: false, code: 'unavailable' });
    // The connect timeout (1 s here); a server that did not answer 401 is not probed for OAuth.
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('bounds the OAuth probe after a 401 by the connect timeout: a server that then hangs is server_unavailable', async () => {
    const who = h.caller();
    await h.configure(who, 'a', [{ server_id: 'h', transport: 'streamable_http', url: unauthorized.url }]);
    const started = Date.now();
    expect(await call(who, 'echo', { timeout_ms: 30_000 })).toMatchObject({ ok: false, code: 'unavailable' });
    // The 401 at once, then the probe (a second initialize, never answered) for at most the connect timeout (1 s).
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(unauthorized.seen.get('initialize')).toBeGreaterThanOrEqual(2);
  });

  it('keeps answering another server while the bad one hangs and breaks', async () => {
    const who = await tenant();
    const echo = (text: string) =>
      h.callTool(who, { agent_id: 'a', server_id: 'g', tool: 'echo', arguments: { text } });
    // `g` is connected first: the rule is that a hung server holds no other server's calls, and starting `g` (a
    // process spawned, then initialized within the 1 s connect timeout) can take longer than that on a loaded host.
    await waitFor(async () => (await echo('warm')).ok);
    const hung = call(who, 'hang', { timeout_ms: 3_000 });
    const started = Date.now();
    const other = await echo('free');
    expect(other).toMatchObject({ ok: true, result: { content: [{ text: 'free' }] } });
    expect(await call(who, 'not_json')).toMatchObject({ ok: false });
    const again = await echo('still');
    expect(again).toMatchObject({ ok: true });
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(await hung).toMatchObject({ ok: false });
  });
});
