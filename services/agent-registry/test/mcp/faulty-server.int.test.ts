import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { faulty, processesWith, startMcpHarness, waitFor, WRAPPER } from './support.ts';
import type { McpHarness } from './support.ts';

/** What a refused call carries besides its code. */
interface Refusal {
  ok: false;
  code: string;
  message: string;
}

describe('the MCP host against a failing server', () => {
  let h: McpHarness;

  beforeAll(async () => {
    h = await startMcpHarness({
      MCP_RESULT_MAX_BYTES: String(4 * 1024 * 1024),
      MCP_OFFLOAD_MAX_BYTES: String(8 * 1024 * 1024),
    });
  });

  afterAll(async () => {
    await h?.stop();
  });

  /** A tenant whose agent `a` has the fixture as server `f` (and `g`, a second copy, when asked). */
  async function tenantWith(...servers: string[]): Promise<VerifiedIdentity> {
    const who = h.caller();
    await h.configure(
      who,
      'a',
      (servers.length > 0 ? servers : ['f']).map((id) => faulty(id)),
    );
    return who;
  }

  const call = (who: VerifiedIdentity, tool: string, extra: Record<string, unknown> = {}) =>
    h.callTool(who, { agent_id: 'a', server_id: 'f', tool, ...extra });

  it('calls a tool and answers its content, size and time', async () => {
    const who = await tenantWith();
    const outcome = await call(who, 'echo', { arguments: { text: 'hello' } });
    expect(outcome).toMatchObject({
      ok: true,
      result: { content: [{ type: 'text', text: 'hello' }], is_error: false },
    });
    const result = (outcome as { result: { bytes_out: number; server_ms: number } }).result;
    expect(result.bytes_out).toBeGreaterThan(0);
    expect(result.server_ms).toBeGreaterThanOrEqual(0);
  });

  it('answers a tool-level error as is_error, not as a refusal', async () => {
    const who = await tenantWith();
    await expect(call(who, 'fail')).resolves.toMatchObject({ ok: true, result: { is_error: true } });
  });

  it('refuses a server that crashes mid-call server_unavailable, refuses at once while it restarts, then serves again', async () => {
    const who = await tenantWith();
    await expect(call(who, 'echo', { arguments: { text: 'up' } })).resolves.toMatchObject({ ok: true });
    const crashed = await call(who, 'crash');
    expect(crashed).toMatchObject({ ok: false, code: 'unavailable' });
    expect((crashed as Refusal).message).toMatch(/closed/);
    const started = Date.now();
    const during = await call(who, 'echo', { arguments: { text: 'during' } });
    if (!during.ok) {
      expect(during.code).toBe('unavailable');
      expect(Date.now() - started).toBeLessThan(1_000);
    }
    await waitFor(async () => (await call(who, 'echo', { arguments: { text: 'again' } })).ok);
    const failed = await waitFor(async () => (await h.events(who.tenant, 'mcp.connection.failed'))[0]);
    expect(Object.keys(failed.payload as object).sort()).toEqual([
      'AgentID',
      'Author',
      'OccurredAt',
      'PauseToken',
      'Reason',
      'RevisionID',
      'ServerID',
      'State',
      'Transport',
    ]);
    expect(failed.payload).toMatchObject({ AgentID: 'a', ServerID: 'f', Transport: 'stdio', State: 'failed' });
    await waitFor(async () => (await h.events(who.tenant, 'mcp.connection.reattached')).length > 0);
  });

  it('refuses a call the server never answers call_timeout within its timeout_ms', async () => {
    const who = await tenantWith();
    // The server connected first: on a slow host its start alone can outlast 300 ms, which is another refusal.
    await expect(call(who, 'echo', { arguments: { text: 'up' } })).resolves.toMatchObject({ ok: true });
    const started = Date.now();
    expect(await call(who, 'hang', { timeout_ms: 300 })).toMatchObject({ ok: false, code: 'timeout' });
    // Refused by the call's own timeout_ms: a loose bound, for hosts 2× apart in speed.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses a 10 MiB result over MCP_OFFLOAD_MAX_BYTES result_too_large and keeps serving', async () => {
    const who = await tenantWith();
    // 10 MiB of JSON through stdio takes seconds on a loaded host: the call's own timeout is not what is tested.
    const outcome = await call(who, 'big', { arguments: { bytes: 10 * 1024 * 1024 }, timeout_ms: 60_000 });
    expect(outcome).toMatchObject({ ok: false, code: 'payload_too_large' });
    expect((outcome as Refusal).message).toMatch(/bytes/);
    await expect(call(who, 'echo', { arguments: { text: 'still here' } })).resolves.toMatchObject({ ok: true });
  });

  it('refuses a result over the offload threshold offload_failed (retryable) when no artifact service answers', async () => {
    const who = await tenantWith();
    const started = Date.now();
    const outcome = await call(who, 'big', { arguments: { bytes: 200_000 } });
    expect(outcome).toMatchObject({ ok: false, code: 'unavailable' });
    expect((outcome as Refusal).message).toMatch(/offload failed/);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(call(who, 'echo', { arguments: { text: 'still here' } })).resolves.toMatchObject({ ok: true });
  });

  it('refuses a call whose server writes a line that is not JSON-RPC protocol_error, then reconnects', async () => {
    const who = await tenantWith();
    const started = Date.now();
    expect(await call(who, 'garbage', { timeout_ms: 20_000 })).toMatchObject({ ok: false, code: 'internal' });
    expect(Date.now() - started).toBeLessThan(5_000);
    await waitFor(async () => (await call(who, 'echo', { arguments: { text: 'back' } })).ok);
  });

  it('refuses a malformed result protocol_error', async () => {
    const who = await tenantWith();
    const outcome = await call(who, 'malformed');
    expect(outcome).toMatchObject({ ok: false, code: 'internal' });
    expect((outcome as Refusal).message).toMatch(/malformed result/);
  });

  it('keeps answering another server while one hangs', async () => {
    const who = await tenantWith('f', 'g');
    const hung = call(who, 'hang', { timeout_ms: 3_000 });
    const started = Date.now();
    const other = await h.callTool(who, { agent_id: 'a', server_id: 'g', tool: 'echo', arguments: { text: 'free' } });
    expect(other).toMatchObject({ ok: true, result: { content: [{ text: 'free' }] } });
    // Nor does the hung call hold its own server's other calls.
    await expect(call(who, 'echo', { arguments: { text: 'same server' } })).resolves.toMatchObject({ ok: true });
    expect(Date.now() - started).toBeLessThan(5_000);
    await hung;
  });

  it('cancels a call in flight through _mcp.cancel_call', async () => {
    const who = await tenantWith();
    await call(who, 'echo', { arguments: { text: 'warm' } });
    const callId = randomUUID();
    const started = Date.now();
    const pending = call(who, 'hang', { call_id: callId, timeout_ms: 20_000 });
    await waitFor(async () => ((await h.cancel(who, callId)) as { result?: { cancelled: boolean } }).result?.cancelled);
    expect(await pending).toMatchObject({ ok: false, code: 'conflict' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await h.cancel(who, callId)).toMatchObject({ ok: true, result: { cancelled: false } });
  });

  it("does not cancel another tenant's call", async () => {
    const who = await tenantWith();
    await call(who, 'echo', { arguments: { text: 'warm' } });
    const callId = randomUUID();
    const pending = call(who, 'slow', { call_id: callId, arguments: { ms: 300 } });
    expect(await h.cancel(h.caller(), callId)).toMatchObject({ ok: true, result: { cancelled: false } });
    await expect(pending).resolves.toMatchObject({ ok: true });
  });

  it('refreshes the tool list on notifications/tools/list_changed', async () => {
    const who = await tenantWith();
    expect(await call(who, 'late_tool')).toMatchObject({ ok: false, code: 'invalid_request' });
    await expect(call(who, 'add_tool', { arguments: { name: 'late_tool' } })).resolves.toMatchObject({ ok: true });
    const answered = await waitFor(async () => {
      const outcome = await call(who, 'late_tool');
      return outcome.ok ? outcome : undefined;
    });
    expect(answered).toMatchObject({ result: { content: [{ text: 'I am late_tool' }] } });
  });

  it('refuses unknown tools, tools without a valid exposed name, and unknown agents', async () => {
    const who = await tenantWith();
    expect(await call(who, 'nope')).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(await call(who, 'dotted.name')).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(await h.callTool(who, { agent_id: 'a', server_id: 'zz', tool: 'echo' })).toMatchObject({
      ok: false,
      code: 'invalid_request',
    });
    const unknownAgent = await h.callTool(who, { agent_id: 'ghost', server_id: 'f', tool: 'echo' });
    expect(unknownAgent).toMatchObject({ ok: false, code: 'invalid_request' });
    expect((unknownAgent as Refusal).message).toMatch(/names no agent/);
  });

  it("refuses a body triple that is not the caller's scope_mismatch", async () => {
    const who = await tenantWith();
    const stranger = { ...h.caller([]), tenant: who.tenant, user: 'mallory' };
    const outcome = await h.callTool(stranger, { agent_id: 'a', server_id: 'f', tool: 'echo', user: 'alice' });
    expect(outcome).toMatchObject({ ok: false, code: 'scope_mismatch' });
  });

  it('refuses a server whose command cannot start server_unavailable', async () => {
    const who = h.caller();
    await h.configure(who, 'a', [{ server_id: 'f', transport: 'stdio', command: '/nonexistent/mcp-server' }]);
    const outcome = await call(who, 'echo');
    expect(outcome).toMatchObject({ ok: false, code: 'unavailable' });
  });
});

describe('the MCP host closing connections', () => {
  it('kills an idle stdio server and the processes it started', async () => {
    const h = await startMcpHarness({ MCP_IDLE_CLOSE_SECONDS: '0.5' });
    try {
      const who = h.caller();
      const marker = `tree-${randomUUID()}`;
      await h.configure(who, 'a', [
        { server_id: 'w', transport: 'stdio', command: process.execPath, args: [WRAPPER, marker, 'linger'] },
      ]);
      const outcome = await h.callTool(who, { agent_id: 'a', server_id: 'w', tool: 'echo', arguments: { text: 'x' } });
      expect(outcome).toMatchObject({ ok: true });
      expect(await processesWith(marker)).toHaveLength(2);
      await waitFor(async () => (await processesWith(marker)).length === 0, 20_000);
    } finally {
      await h.stop();
    }
  });

  it('kills stdio servers when the service stops', async () => {
    const h = await startMcpHarness();
    const marker = `stop-${randomUUID()}`;
    try {
      const who = h.caller();
      await h.configure(who, 'a', [faulty('f', marker)]);
      expect(
        await h.callTool(who, { agent_id: 'a', server_id: 'f', tool: 'echo', arguments: { text: 'x' } }),
      ).toMatchObject({
        ok: true,
      });
      expect(await processesWith(marker)).toHaveLength(1);
    } finally {
      await h.stop();
    }
    await waitFor(async () => (await processesWith(marker)).length === 0);
  });
});
